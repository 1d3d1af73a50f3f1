//! Accepting connections: HTTP/1.1 with bounds on what a client can hold.
//!
//! `axum::serve` has no timeouts, so a client that opens connections and
//! sends nothing (or half a head, or half a body), or never reads what it
//! asked for, would keep them, and their file descriptors, for ever. Here
//! every connection has a deadline for each request head (which also ends
//! idle keep-alive connections), request bodies have one too
//! (`api::BODY_TIMEOUT`), an answer the client stops reading is given up
//! after [`WRITE_TIMEOUT`] without progress, and at most
//! [`ServeLimits::connections`] are open at once: beyond that, new ones wait
//! in the kernel's backlog.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Sleep;

/// How long a client has to send a whole request head, from the moment the
/// server waits for it (a new connection, or the end of the previous
/// response): browsers send a head at once, so this only ends stalled and
/// idle connections.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(15);

/// How long an answer may wait for the client to take any of it. A
/// browser reads as fast as the network lets it; one that reads nothing
/// for this long is gone or holding the connection on purpose.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Connections open at once. A console's clients are a team's browsers and
/// CI jobs; the bound keeps a flood of connections under the process's file
/// descriptor limit (often 1,024 by default), so the server can still open
/// its store and answer.
pub const MAX_CONNECTIONS: usize = 768;

/// How long in-flight requests may take to finish after a shutdown signal.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The bounds [`serve`] applies; tests use short ones.
#[derive(Debug, Clone, Copy)]
pub struct ServeLimits {
    pub header_timeout: Duration,
    pub write_timeout: Duration,
    pub connections: usize,
    pub shutdown_grace: Duration,
}

impl Default for ServeLimits {
    fn default() -> ServeLimits {
        ServeLimits {
            header_timeout: HEADER_TIMEOUT,
            write_timeout: WRITE_TIMEOUT,
            connections: MAX_CONNECTIONS,
            shutdown_grace: SHUTDOWN_GRACE,
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets requests
/// in flight finish (for at most `limits.shutdown_grace`).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ServeLimits,
    shutdown: impl Future<Output = ()>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let slots = Arc::new(Semaphore::new(limits.connections));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, say: waiting lets some close
                    // instead of spinning on the same error.
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Answers are small and written whole: no reason to wait for more.
        let _ = stream.set_nodelay(true);
        let stream = WriteDeadline::new(stream, limits.write_timeout);
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // Errors here are the client's (a reset, a timed-out head).
            if let Err(e) = connection.await {
                tracing::debug!("connection: {e}");
            }
            drop(slot);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_grace) => {
            tracing::warn!("requests still in flight after {:?}; stopping anyway", limits.shutdown_grace);
        }
    }
}

/// A connection whose writes fail once the client has taken nothing for
/// `timeout`: hyper then closes it. Any progress starts the wait again, so a
/// slow reader is served, one that stopped is not.
struct WriteDeadline {
    stream: TcpStream,
    timeout: Duration,
    /// Armed when a write first waits, cleared when one makes progress.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl WriteDeadline {
    fn new(stream: TcpStream, timeout: Duration) -> WriteDeadline {
        WriteDeadline {
            stream,
            timeout,
            stalled: None,
        }
    }

    /// `poll` of the stream's write side, under the deadline.
    fn deadline<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: impl FnOnce(Pin<&mut TcpStream>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if let Poll::Ready(done) = poll(Pin::new(&mut self.stream), cx) {
            self.stalled = None;
            return Poll::Ready(done);
        }
        let timeout = self.timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        ready!(stalled.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took none of the answer in time",
        )))
    }
}

impl AsyncRead for WriteDeadline {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteDeadline {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().deadline(cx, |s, cx| s.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .deadline(cx, |s, cx| s.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().deadline(cx, |s, cx| s.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().deadline(cx, |s, cx| s.poll_shutdown(cx))
    }
}
