use std::sync::Arc;

use clap::Parser;
use gco_console::config::Config;
use gco_console::server::{ServeLimits, serve};
use gco_console::service::Service;
use gco_console::store::{self, Opened};
use tracing_subscriber::EnvFilter;

// Requests build and drop many small JSON values; mimalloc serves them
// faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,tower_http=info")),
        )
        .init();
    let config = Config::parse();
    match run(config).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("gco-console: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(config: Config) -> Result<(), String> {
    config.check_store()?;
    let access = config.check().await?;
    tracing::info!(auth = %access.mode(), "{}", access.describe());
    let Opened { store, sign_outs } = store::open(&config.store_location()).await?;
    if let Some(oidc) = access.oidc() {
        match sign_outs {
            Some(kept) => oidc.keep_sign_outs_in(kept),
            // Sessions another console or a restart would accept: a
            // sign-out kept in memory would not hold there.
            None if config.session_key_file.is_some() => {
                return Err("--auth oidc with --session-key-file keeps sign-outs in the history table, and --history-table is off: \
                     give the console a history table (moto or DynamoDB), or leave out --session-key-file (a key made at start-up: \
                     sessions then end with the process, and sign-outs are kept in its memory)"
                    .into());
            }
            None => tracing::warn!(
                "sign-outs are kept in this process's memory (--history-table off): its sessions end with it"
            ),
        }
    }
    if !config.dist.join("index.html").is_file() {
        tracing::warn!(dist = %config.dist.display(), "no console build found; only the API is served");
    }
    if !store.records_history() {
        tracing::warn!(
            "changes are NOT recorded: --history-table off (no history, no revert, no record of who changed what)"
        );
    }
    let service = Service::new(store, config.regions.clone(), config.default_image.clone())
        .with_frameworks(config.frameworks)
        .with_auth(access.mode());
    let service = match &config.monitor_settings {
        Some(path) => service.with_monitor_settings(gco_console::monitor_settings::read(path)?),
        None => service,
    };
    tracing::info!(frameworks = %config.frameworks, "frameworks the team's GCO accepts");
    let metrics_listener = match config.metrics_addr {
        Some(addr) => Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("--metrics-addr {addr}: {e}"))?,
        ),
        None => None,
    };
    let service = Arc::new(service);
    if let Some(every) = config.emf_interval.filter(|d| !d.is_zero()) {
        if service.freshness().is_none() && config.dynamodb_region().is_none() {
            tracing::warn!(
                "--emf-interval: the embedded store keeps no view of a table; no view age to write"
            );
        }
        tracing::info!(interval = ?every, "the view's age goes to stdout as an embedded-metric-format line while someone looks");
        gco_console::emf::spawn(Arc::clone(&service), config.dynamodb_table.clone(), every);
    }
    if let Some(listener) = metrics_listener {
        let metrics = gco_console::app::metrics_app(Arc::clone(&service), access.clone());
        tracing::info!(
            "metrics on http://{}/metrics",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        tokio::spawn(serve(
            listener,
            metrics,
            ServeLimits::default(),
            std::future::pending(),
        ));
    }
    let app =
        gco_console::app::app_shared(service, access, &config.dist, config.metrics_addr.is_none());
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| format!("{}: {e}", config.addr))?;
    tracing::info!(
        "listening on http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    serve(listener, app, ServeLimits::default(), shutdown()).await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM; in-flight requests then finish.
async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
}
