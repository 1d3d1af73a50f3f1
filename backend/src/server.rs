//! Accepting connections: HTTP/1.1 with bounds on what a client can hold.
//!
//! `axum::serve` has no timeouts, so a client that opens connections and
//! sends nothing (or half a head, or half a body) would keep them, and their
//! file descriptors, for ever. Here every connection has a deadline for each
//! request head (which also ends idle keep-alive connections), request
//! bodies have one too (`api::BODY_TIMEOUT`), and at most [`ServeLimits::connections`]
//! are open at once: beyond that, new ones wait in the kernel's backlog.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How long a client has to send a whole request head, from the moment the
/// server waits for it (a new connection, or the end of the previous
/// response): browsers send a head at once, so this only ends stalled and
/// idle connections.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(15);

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
    pub connections: usize,
    pub shutdown_grace: Duration,
}

impl Default for ServeLimits {
    fn default() -> ServeLimits {
        ServeLimits {
            header_timeout: HEADER_TIMEOUT,
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
