//! Single use of a confirmation: the first request that presents a given
//! confirmation nonce records it (one conditional write, expiring with the
//! confirmation); every later one is refused.

use super::Ctx;
use super::error::ApiError;

/// True the first time `nonce` is used in this workspace, false after.
pub async fn consume(ctx: &Ctx<'_>, nonce: &str, expires_at: u64) -> Result<bool, ApiError> {
    Ok(ctx.store.use_once(ctx.tenant, &format!("confirm:{nonce}"), expires_at).await?)
}
