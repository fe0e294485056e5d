//! Logging: JSON lines on Lambda (CloudWatch), readable lines locally. The
//! filter comes from `RUST_LOG` (default `info`). Request spans carry the
//! request id, era and method; bodies and credential headers are never logged.

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line (Lambda: CloudWatch parses them).
    Json,
    Pretty,
}

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    // try_init: a second initialisation (tests, embedding) keeps the first subscriber.
    let _ = match format {
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).flatten_event(true).try_init(),
        LogFormat::Pretty => builder.compact().try_init(),
    };
}
