//! ipc: Unix domain socket paths.

use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A fresh path for `ipc://*` (libzmq picks a unique name in the temp directory).
pub(crate) fn wildcard_path() -> String {
    let dir = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".to_string());
    format!(
        "{}/ferromq-{}-{}",
        dir.trim_end_matches('/'),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The endpoint string for a path.
pub(crate) fn endpoint_string(path: &str) -> String {
    format!("ipc://{path}")
}
