//! `gco-spec lsp` driven as an editor drives it: the binary spawned, LSP's
//! JSON-RPC framed on its stdin and stdout.
//! `cargo test -p gco-spec --test lsp -- --nocapture` prints the session.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

struct Editor {
    child: Child,
    stdin: ChildStdin,
    from_server: Receiver<Value>,
    next_id: i64,
    /// Notifications that came while waiting for an answer.
    pending: Vec<Value>,
    transcript: Vec<String>,
}

impl Editor {
    fn start() -> Editor {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gco-spec"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, from_server) = channel();
        thread::spawn(move || {
            loop {
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if line == "\r\n" {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; length];
                stdout.read_exact(&mut body).unwrap();
                if sender.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Editor {
            child,
            stdin,
            from_server,
            next_id: 0,
            pending: Vec::new(),
            transcript: Vec::new(),
        }
    }

    fn send_raw(&mut self, body: &[u8]) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        self.transcript.push(format!("--> {body}"));
        self.send_raw(body.as_bytes());
    }

    fn receive(&mut self) -> Value {
        let message = self
            .from_server
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers");
        self.transcript.push(format!("<-- {message}"));
        message
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The answer to a request (its `result`, or its `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.receive();
            if message["id"] == id {
                return match message.get("error") {
                    Some(error) => json!({"error": error}),
                    None => message["result"].clone(),
                };
            }
            self.pending.push(message);
        }
    }

    /// The next diagnostics the server publishes.
    fn diagnostics(&mut self) -> Value {
        let at = self
            .pending
            .iter()
            .position(|m| m["method"] == "textDocument/publishDiagnostics");
        let message = match at {
            Some(at) => self.pending.remove(at),
            None => loop {
                let message = self.receive();
                if message["method"] == "textDocument/publishDiagnostics" {
                    break message;
                }
                self.pending.push(message);
            },
        };
        message["params"].clone()
    }

    fn open(&mut self, uri: &str, language: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
    }

    fn initialize(&mut self) -> Value {
        self.initialize_with(Value::Null)
    }

    fn initialize_with(&mut self, options: Value) -> Value {
        let answer = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {},
                "initializationOptions": options}),
        );
        self.notify("initialized", json!({}));
        answer
    }

    /// `shutdown` then `exit`: the process ends with 0.
    fn finish(mut self) -> Vec<String> {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
        assert!(self.pending.is_empty(), "unread: {:?}", self.pending);
        self.transcript
    }
}

/// The text a diagnostic's or hover's LSP range covers (UTF-16 columns).
fn text_at(text: &str, range: &Value) -> String {
    let offset = |p: &Value| -> usize {
        let (line, character) = (
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        );
        let mut at = 0;
        for (n, l) in text.split_inclusive('\n').enumerate() {
            if n as u64 == line {
                let mut units = 0;
                for (i, c) in l.char_indices() {
                    if units == character {
                        return at + i;
                    }
                    units += c.len_utf16() as u64;
                }
                return at + l.len();
            }
            at += l.len();
        }
        text.len()
    };
    text[offset(&range["start"])..offset(&range["end"])].to_owned()
}

fn position(text: &str, needle: &str, after: usize) -> Value {
    let at = text.find(needle).unwrap() + after;
    let line = text[..at].matches('\n').count();
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let character: usize = text[start..at].chars().map(char::len_utf16).sum();
    json!({"line": line, "character": character})
}

const URI: &str = "file:///work/chat.gco.json";
const REQUEST: &str = "{\n  \"endpoint_name\": \"chat\",\n  \"image\": \"vllm/vllm-openai:v0.27.1\",\n  \"labels\": {\"team\": \"\u{1F600}\u{4E2D}\"}, \"prefil\": 2,\n  \"mooncake_mode\": \"both\",\n  \"port\": 0\n}\n";

#[test]
fn an_editor_session() {
    let mut editor = Editor::start();
    let init = editor.initialize();
    let caps = &init["capabilities"];
    assert_eq!(init["serverInfo"]["name"], "gco-spec");
    assert_eq!(caps["hoverProvider"], true);
    assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental");
    assert_eq!(
        caps["completionProvider"]["triggerCharacters"],
        json!(["\"", ":"])
    );

    // Open: the errors first, each with its range, after the emoji too.
    editor.open(URI, "json", REQUEST);
    let published = editor.diagnostics();
    assert_eq!(published["uri"], URI);
    assert_eq!(published["version"], 1);
    let found: Vec<(String, String, u64, String)> = published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["data"]["path"].as_str().unwrap().to_owned(),
                text_at(REQUEST, &d["range"]),
                d["severity"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let by_code = |code: &str| found.iter().find(|d| d.0 == code).unwrap();
    assert_eq!(found[0].2, 1, "errors first: {found:?}");
    let port = by_code("port");
    assert_eq!((port.1.as_str(), port.2), ("0", 1));
    assert!(port.3.contains("got 0"), "{found:?}");
    // UTF-16 columns: the emoji counts two, the CJK character one.
    assert_eq!(by_code("labels.team").1, "\"\u{1F600}\u{4E2D}\"");
    let unknown = by_code("prefil");
    assert_eq!((unknown.1.as_str(), unknown.2), ("\"prefil\"", 2));
    assert!(unknown.3.contains("did you mean 'prefill_replicas'"));
    let first = &published["diagnostics"][0];
    assert_eq!(first["source"], "gco-spec");
    assert!(
        first["code"].as_str().unwrap().starts_with("GCO"),
        "{first}"
    );
    assert!(
        first["codeDescription"]["href"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );

    // The quick fix an unknown member's "did you mean" offers.
    let prefil = published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["data"]["path"] == "prefil")
        .unwrap()
        .clone();
    let actions = editor.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": prefil["range"], "context": {"diagnostics": [prefil]}}),
    );
    assert_eq!(actions.as_array().unwrap().len(), 1, "{actions}");
    assert_eq!(actions[0]["title"], "Rename to \"prefill_replicas\"");
    assert_eq!(actions[0]["kind"], "quickfix");
    let edit = &actions[0]["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], "\"prefill_replicas\"");
    assert_eq!(text_at(REQUEST, &edit["range"]), "\"prefil\"");

    // An incremental change: the port 0 becomes 2, and its error goes.
    let zero = position(REQUEST, "\": 0", 3);
    let mut text = REQUEST.replace("\": 0", "\": 2");
    editor.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [
            {"range": {"start": zero, "end": {"line": zero["line"], "character": zero["character"].as_u64().unwrap() + 1}}, "text": "2"}
        ]}),
    );
    let published = editor.diagnostics();
    assert_eq!(published["version"], 2);
    let severities: Vec<u64> = published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["severity"].as_u64().unwrap())
        .collect();
    assert_eq!(severities.len(), 2, "{published}");
    assert!(!published.to_string().contains("got 0"), "{published}");

    // Hover on a key: its documentation, over the key.
    let at = position(&text, "\"mooncake_mode\"", 3);
    let hover = editor.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": at}),
    );
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(shown.starts_with("**`mooncake_mode`**"), "{shown}");
    assert!(shown.contains("Builds the `mooncake` block") && shown.contains("`\"disaggregated\"`"));
    assert_eq!(text_at(&text, &hover["range"]), "\"mooncake_mode\"");

    // Completion of enumerated values inside the value being typed.
    let at = position(&text, "\"both\"", 1);
    let items = editor.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": URI}, "position": at}),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["\"both\"", "\"disaggregated\"", "\"store\""]);
    assert_eq!(text_at(&text, &items[1]["textEdit"]["range"]), "\"both\"");

    // Completion of member names in a key being typed: those not there yet.
    let end = position(&text, "\n}", 0);
    editor.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 3}, "contentChanges": [
            {"range": {"start": end, "end": end}, "text": ",\n  \"mooncake_s"}
        ]}),
    );
    text = text.replace("\n}", ",\n  \"mooncake_s\n}");
    let published = editor.diagnostics();
    assert_eq!(
        published["diagnostics"].as_array().unwrap().len(),
        1,
        "{published}"
    );
    assert!(
        published["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON")
    );
    let at = position(&text, "\"mooncake_s", 11);
    let items = editor.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": URI}, "position": at}),
    );
    let items = items.as_array().unwrap();
    let labels: Vec<&str> = items.iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"mooncake_store") && labels.contains(&"rewrite_image"));
    assert!(
        !labels.contains(&"mooncake_mode") && !labels.contains(&"image"),
        "{labels:?}"
    );
    let store = items
        .iter()
        .find(|i| i["label"] == "mooncake_store")
        .unwrap();
    assert_eq!(store["textEdit"]["newText"], "\"mooncake_store\": ");
    assert_eq!(text_at(&text, &store["textEdit"]["range"]), "\"mooncake_s");
    assert!(
        store["documentation"]["value"]
            .as_str()
            .unwrap()
            .contains("The block's `store`.")
    );

    // Closing the document clears its diagnostics.
    editor.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": URI}}),
    );
    assert_eq!(editor.diagnostics()["diagnostics"], json!([]));

    let transcript = editor.finish();
    println!("{}", transcript.join("\n"));
}

#[test]
fn other_files_are_left_alone_unless_sent_as_gco_json() {
    let mut editor = Editor::start();
    editor.initialize();
    editor.open("file:///work/package.json", "json", "{\"name\": 1}");
    // The server answers in order: diagnostics for package.json would come
    // before this answer.
    let hover = editor.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///work/package.json"}, "position": {"line": 0, "character": 3}}),
    );
    assert_eq!(hover, Value::Null);
    assert!(editor.pending.is_empty(), "{:?}", editor.pending);
    editor.open("untitled:Untitled-1", "gco-json", "{\"mode\": \"both\"}");
    let published = editor.diagnostics();
    assert_eq!(published["uri"], "untitled:Untitled-1");
    assert!(
        published["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("topology")
    );
    // A spec's unknown key is marked on the key, and renamed by the fix.
    let spec = "{\"image\": \"x\", \"replica\": 2}";
    editor.open("file:///work/web.spec.gco.json", "json", spec);
    let published = editor.diagnostics();
    let unknown = &published["diagnostics"][0];
    assert_eq!(
        text_at(spec, &unknown["range"]),
        "\"replica\"",
        "{published}"
    );
    let actions = editor.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": "file:///work/web.spec.gco.json"}, "range": unknown["range"], "context": {"diagnostics": []}}),
    );
    assert_eq!(actions[0]["title"], "Rename to \"replicas\"");
    // A method it does not know is an error answer, not the end.
    let answer = editor.request("textDocument/definition", json!({}));
    assert_eq!(answer["error"]["code"], -32601);
    editor.finish();
}

#[test]
fn bad_input_gets_one_diagnostic_and_the_server_stays() {
    let mut editor = Editor::start();
    editor.initialize();
    for (n, text) in [
        "",
        "{",
        "{\"a\": [1,",
        "\u{0}\u{7f}garbage",
        &"[".repeat(5000),
    ]
    .into_iter()
    .enumerate()
    {
        let uri = format!("file:///work/bad{n}.gco.json");
        editor.open(&uri, "json", text);
        let published = editor.diagnostics();
        let found = published["diagnostics"].as_array().unwrap();
        assert_eq!(found.len(), 1, "{text:?}: {found:?}");
        assert_eq!(found[0]["severity"], 1);
        assert!(found[0]["range"]["start"]["line"].is_u64());
    }
    // Frames that do not read: not JSON, a lone surrogate, hostile params.
    editor.send_raw(b"{not json");
    editor.send_raw(br#"{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///work/s.gco.json", "languageId": "json", "version": 1, "text": "{\"image\": \"a\ud800\"}"}}}"#);
    let published = editor.diagnostics();
    assert_eq!(published["uri"], "file:///work/s.gco.json");
    // Bytes that are not UTF-8 in a frame: read as U+FFFD.
    editor.send_raw(b"{\"jsonrpc\": \"2.0\", \"method\": \"textDocument/didOpen\", \"params\": {\"textDocument\": {\"uri\": \"file:///work/u.gco.json\", \"languageId\": \"json\", \"version\": 1, \"text\": \"{\\\"image\\\": \\\"\xff\\\"}\"}}}");
    let published = editor.diagnostics();
    assert_eq!(published["uri"], "file:///work/u.gco.json");
    let answer = editor.request("textDocument/hover", json!({"textDocument": 7}));
    assert_eq!(answer["error"]["code"], -32602);
    let answer = editor.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": "file:///work/s.gco.json"}, "position": {"line": 4_000_000_000u64, "character": 4_000_000_000u64}}),
    );
    assert!(answer.is_array() || answer.is_null(), "{answer}");
    editor.finish();
}

#[test]
fn the_editor_settings_choose_the_frameworks() {
    let tgi = r#"{"endpoint_name": "old", "image": "ghcr.io/huggingface/text-generation-inference:3", "framework": "tgi"}"#;
    let messages = |options: Value| -> Vec<String> {
        let mut editor = Editor::start();
        editor.initialize_with(options);
        editor.open("file:///work/old.gco.json", "json", tgi);
        let published = editor.diagnostics();
        let said: Vec<String> = editor
            .pending
            .drain(..)
            .map(|m| m["params"]["message"].as_str().unwrap().to_owned())
            .collect();
        editor.finish();
        published["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["message"].as_str().unwrap().to_owned())
            .chain(said)
            .collect()
    };
    assert_eq!(
        messages(Value::Null),
        ["framework must be 'vllm' or 'sglang'"]
    );
    assert_eq!(
        messages(json!({"frameworks": "vllm,tgi"})),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(json!({"frameworks": ["vllm", "tgi"]})),
        Vec::<String>::new()
    );
    let refused = messages(json!({"frameworks": "vllm,nope"}));
    assert_eq!(refused[0], "framework must be 'vllm' or 'sglang'");
    assert!(
        refused[1].starts_with("gco-spec: initializationOptions.frameworks: "),
        "{refused:?}"
    );
}
