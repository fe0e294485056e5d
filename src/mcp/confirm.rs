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
//! The round trip itself (the request, the state, reading the answer) is
//! `super::input`'s, as for any request that asks the client for input.

use serde_json::{Map, Value, json};

use super::Call;
use super::input::{self, Asked, Binding, Elicited, Request, Responses};
use super::jsonrpc::RpcError;
use super::method::Method;
use crate::api::Ctx;
use crate::domain::hex;

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
    let binding = Binding { method: Method::ToolsCall, name, args };
    let state = input::open(call, ctx.tenant, PURPOSE, &binding)?;
    let answer = Responses::read(&call.message.params)?.elicitation(KEY)?.map(|answer| match answer {
        Elicited::Accepted(content) => content.get(KEY) == Some(&Value::Bool(true)),
        Elicited::Declined | Elicited::Cancelled => false,
    });

    let (Some(state), Some(confirmed)) = (state, answer) else {
        return Ok(Decision::Ask(ask(call, ctx, &binding, (title, effect))?));
    };
    let nonce = state.data.get("nonce").and_then(Value::as_str).unwrap_or("").to_owned();
    if !crate::api::confirmations::consume(ctx, &nonce, state.exp).await.map_err(|e| {
        tracing::error!(error = %e, "cannot record a confirmation");
        RpcError::unavailable("The service is temporarily unavailable; try again shortly")
    })? {
        tracing::info!(reason = "already used", "requestState refused");
        return Err(RpcError::invalid_params("Invalid or expired requestState"));
    }
    Ok(if confirmed { Decision::Run } else { Decision::NotConfirmed })
}

fn ask(
    call: &Call<'_>,
    ctx: &Ctx<'_>,
    binding: &Binding<'_>,
    (title, effect): (&str, &str),
) -> Result<Value, RpcError> {
    let nonce: [u8; 16] = crate::sys::random();
    let state = input::seal(call, ctx.tenant, PURPOSE, binding, json!({"nonce": hex(&nonce)}))?;
    let schema = json!({
        "type": "object",
        "properties": {
            KEY: {"type": "boolean", "title": title, "description": "Tick to confirm", "default": false}
        },
        "required": [KEY]
    });
    let request =
        Request::Form { message: message(title, effect, binding.args, ctx.tenant.workspace.as_str()), schema };
    Ok(Asked::new().ask(KEY, &request).with_state(state).into_value())
}
