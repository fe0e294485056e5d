//! Confirmation of destructive calls on a server that keeps no session
//! (docs/protocol.md: "Confirmation of destructive calls"; docs/security.md: "Security rules").
//!
//! Round 1 answers `input_required` with a form elicitation that says what
//! will happen, and a `requestState`: an encrypted, authenticated token (see
//! `crate::secrets`) bound to the principal (`iss`, `sub`, `org_id`), the
//! workspace, the tool and a SHA-256 of its canonical arguments, expiring
//! after `CONFIRMATION_TTL_SECS`, carrying a random nonce. Round 2 must bring
//! the same state back with the user's answer; the nonce is then consumed
//! with a conditional write, so a state is honoured at most once. Every
//! failure of the state gets one fixed message; the reason is only logged.

use aws_lc_rs::digest::{SHA256, digest};
use serde_json::{Map, Value, json};

use super::Call;
use super::era::ProtocolVersion;
use super::jsonrpc::RpcError;
use super::method::Method;
use crate::api::Ctx;
use crate::domain::hex;
use crate::sys::unix_now;

const PURPOSE: &str = "confirm";
const KEY: &str = "confirm";

/// What to do with a call of a destructive tool.
pub enum Decision {
    /// Ask the user: the `input_required` result to send.
    Ask(Value),
    /// The user confirmed this very call: run it.
    Run,
    /// The user declined or cancelled: run nothing.
    NotConfirmed,
}

fn invalid_state(reason: &str) -> RpcError {
    tracing::info!(reason, "requestState refused");
    RpcError::invalid_params("Invalid or expired requestState")
}

fn args_digest(args: &Map<String, Value>) -> String {
    // serde_json's map is ordered by key, so this is canonical.
    hex(digest(&SHA256, Value::Object(args.clone()).to_string().as_bytes()).as_ref())
}

/// The elicitation message: the tool, its target and its effect, with every
/// argument quoted as data.
fn message(title: &str, effect: &str, args: &Map<String, Value>, workspace: &str) -> String {
    let target: Vec<String> = args.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!("{title}: {} in workspace {workspace}. {effect} Do you want to go ahead?", target.join(", "))
}

pub async fn decide(
    call: &Call<'_>,
    ctx: &Ctx<'_>,
    tool: (&str, &str, &str),
    args: &Map<String, Value>,
) -> Result<Decision, RpcError> {
    let (name, title, effect) = tool;
    let params = &call.message.params;
    let secrets = &call.server.secrets;
    let principal = ctx.principal;
    let workspace = ctx.tenant.workspace.as_str();
    let digest = args_digest(args);

    let state = match params.get("requestState") {
        None => None,
        Some(Value::String(token)) => {
            let payload = secrets.open_token(PURPOSE, token).ok_or_else(|| invalid_state("not authentic"))?;
            let field = |key: &str| payload.get(key).and_then(Value::as_str);
            let bound = field("iss") == Some(principal.iss.as_str())
                && field("sub") == Some(principal.sub.as_str())
                && field("org") == Some(principal.org.as_str())
                && field("ws") == Some(workspace)
                && field("m") == Some(Method::ToolsCall.as_str())
                && field("tool") == Some(name)
                && field("args") == Some(digest.as_str());
            if !bound {
                return Err(invalid_state("bound to another call"));
            }
            let exp = payload.get("exp").and_then(Value::as_u64).unwrap_or(0);
            if exp < unix_now() {
                return Err(invalid_state("expired"));
            }
            let nonce = field("nonce").unwrap_or("").to_owned();
            Some((nonce, exp))
        }
        Some(_) => return Err(invalid_state("not a string")),
    };

    let answer = match params.get("inputResponses") {
        None => None,
        Some(Value::Object(responses)) => match responses.get(KEY) {
            None => None,
            Some(Value::Object(answer)) => match answer.get("action").and_then(Value::as_str) {
                Some(action @ ("accept" | "decline" | "cancel")) => {
                    let confirmed = action == "accept"
                        && answer.get("content").and_then(|c| c.get(KEY)) == Some(&Value::Bool(true));
                    Some(confirmed)
                }
                _ => {
                    return Err(RpcError::invalid_params(
                        "inputResponses.confirm.action must be accept, decline or cancel",
                    ));
                }
            },
            Some(_) => {
                return Err(RpcError::invalid_params("inputResponses.confirm must be an elicitation result object"));
            }
        },
        Some(_) => return Err(RpcError::invalid_params("inputResponses must be an object")),
    };

    let (Some((nonce, exp)), Some(confirmed)) = (state, answer) else {
        return Ok(Decision::Ask(ask(call, ctx, (name, title, effect), args, &digest)?));
    };
    if !crate::api::confirmations::consume(ctx, &nonce, exp).await.map_err(|e| {
        tracing::error!(error = %e, "cannot record a confirmation");
        RpcError::unavailable("The service is temporarily unavailable; try again shortly")
    })? {
        return Err(invalid_state("already used"));
    }
    Ok(if confirmed { Decision::Run } else { Decision::NotConfirmed })
}

fn ask(
    call: &Call<'_>,
    ctx: &Ctx<'_>,
    (name, title, effect): (&str, &str, &str),
    args: &Map<String, Value>,
    digest: &str,
) -> Result<Value, RpcError> {
    let nonce: [u8; 16] = crate::sys::random();
    let exp = unix_now() + call.server.confirmation_ttl_secs;
    let payload = json!({
        "iss": ctx.principal.iss, "sub": ctx.principal.sub, "org": ctx.principal.org.as_str(),
        "ws": ctx.tenant.workspace.as_str(), "m": Method::ToolsCall.as_str(), "tool": name, "args": digest,
        "exp": exp, "nonce": hex(&nonce), "v": ProtocolVersion::V2026_07_28.as_str(),
    });
    let state = call
        .server
        .secrets
        .seal_token(PURPOSE, &payload)
        .ok_or_else(|| RpcError::unavailable("The service is temporarily unavailable; try again shortly"))?;
    Ok(json!({
        "inputRequests": {
            KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": message(title, effect, args, ctx.tenant.workspace.as_str()),
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            KEY: {"type": "boolean", "title": title, "description": "Tick to confirm", "default": false}
                        },
                        "required": [KEY]
                    }
                }
            }
        },
        "requestState": state,
    }))
}
