//! JSON-RPC over stdin and stdout, framed by `Content-Length` headers.
//!
//! Not `lsp_server::Connection::stdio`: its reader stops at the first
//! message it cannot read, and a JavaScript client writes a lone surrogate
//! in a document's text as `\ud800`, which serde_json refuses. Here a frame
//! that does not read is skipped with a line on stderr, a lone surrogate
//! becomes U+FFFD (what the document's text could hold anyway), and only
//! the end of stdin ends the reading.

use std::io::{self, BufRead, Read};
use std::thread;

use lsp_server::{Connection, Message};

/// The largest message read; a longer one is skipped, unread.
const MAX_FRAME: usize = 64 << 20;

/// A connection over stdin and stdout, and the thread that writes: join it
/// once the connection is dropped, so every answer is out.
pub fn stdio() -> (Connection, thread::JoinHandle<()>) {
    let (server, client) = Connection::memory();
    let Connection {
        sender: to_server,
        receiver: from_server,
    } = client;
    // Not joined: it may wait on stdin after the session ends.
    thread::spawn(move || {
        let mut input = io::stdin().lock();
        loop {
            match read_frame(&mut input) {
                Ok(Some(body)) => match parse(&body) {
                    Ok(message) => {
                        let exit =
                            matches!(&message, Message::Notification(n) if n.method == "exit");
                        if to_server.send(message).is_err() || exit {
                            return;
                        }
                    }
                    Err(e) => eprintln!("gco-spec lsp: a message skipped: {e}"),
                },
                Ok(None) => return,
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    eprintln!("gco-spec lsp: {e}");
                }
                Err(_) => return,
            }
        }
    });
    let writer = thread::spawn(move || {
        let mut output = io::stdout().lock();
        for message in from_server {
            if message.write(&mut output).is_err() {
                return;
            }
        }
    });
    (server, writer)
}

/// One message's body; `None` at the end of the input.
pub fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut length = None;
    loop {
        let mut line = Vec::new();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim_ascii();
        if line.is_empty() {
            // Blank lines before any header are noise, not a frame's end.
            if length.is_some() {
                break;
            }
            continue;
        }
        let line = String::from_utf8_lossy(line);
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let length = length.unwrap_or_default();
    if length > MAX_FRAME {
        io::copy(&mut input.take(length as u64), &mut io::sink())?;
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {length} bytes skipped (at most {MAX_FRAME})"),
        ));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

/// A message from a frame's body: lossy UTF-8, lone surrogates replaced.
pub fn parse(body: &[u8]) -> Result<Message, serde_json::Error> {
    let text = String::from_utf8_lossy(body);
    serde_json::from_str(&text).or_else(|e| {
        let mended = mend_surrogates(&text);
        if mended == text {
            return Err(e);
        }
        serde_json::from_str(&mended)
    })
}

/// `text` with each `\uXXXX` escape of a lone surrogate replaced by
/// `\ufffd`; escape pairs that form one character are kept.
fn mend_surrogates(text: &str) -> String {
    let surrogate = |at: usize| -> Option<u16> {
        let hex = text.get(at + 2..at + 6)?;
        let unit = u16::from_str_radix(hex, 16).ok()?;
        (text[at..].starts_with("\\u") && (0xd800..0xe000).contains(&unit)).then_some(unit)
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = text[at..].find('\\') {
        let escape = at + found;
        out.push_str(&text[at..escape]);
        match surrogate(escape) {
            Some(0xd800..0xdc00) if surrogate(escape + 6).is_some_and(|low| low >= 0xdc00) => {
                out.push_str(&text[escape..escape + 12]);
                at = escape + 12;
            }
            Some(_) => {
                out.push_str("\\ufffd");
                at = escape + 6;
            }
            None => {
                // Any other escape: the backslash and the character after it.
                let next = text[escape + 1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&text[escape..escape + 1 + next]);
                at = escape + 1 + next;
            }
        }
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_read_one_by_one_and_noise_is_skipped() {
        let input =
            b"\r\nContent-Length: 2\r\nContent-Type: x\r\n\r\n{}content-length:3\r\n\r\n[1]";
        let mut input = &input[..];
        assert_eq!(read_frame(&mut input).unwrap(), Some(b"{}".to_vec()));
        assert_eq!(read_frame(&mut input).unwrap(), Some(b"[1]".to_vec()));
        assert_eq!(read_frame(&mut input).unwrap(), None);
        let huge = format!("Content-Length: {}\r\n\r\nabc", MAX_FRAME + 1);
        let mut input = huge.as_bytes();
        assert!(read_frame(&mut input).is_err());
        assert_eq!(read_frame(&mut input).unwrap(), None);
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let body = br#"{"jsonrpc": "2.0", "method": "x", "params": {"t": "a\ud800b\\ud800\ud83d\ude00\udc00"}}"#;
        let Message::Notification(n) = parse(body).unwrap() else {
            panic!()
        };
        assert_eq!(n.params["t"], "a\u{fffd}b\\ud800\u{1f600}\u{fffd}");
    }
}
