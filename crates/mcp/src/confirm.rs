//! Confirmation of destructive calls on a server that keeps no session
//! (docs/protocol.md: "Confirmation of destructive calls"; docs/security.md: "Security rules").
//!
//! Round 1 answers `input_required` with a form elicitation that says what
//! will happen, and a `requestState`: an encrypted, authenticated token (see
//! `inbox_support::secrets`) bound to the principal (`iss`, `sub`, `org_id`), the
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
use inbox_api::Ctx;
use inbox_domain::{hex, text};

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

/// The arguments that name what a call acts on: a record's id, an allowed
/// sender, a webhook's URL, an inbox's slug. They come first, with the
/// effect; every other argument follows both, so no text of the caller's
/// stands between the person and what they approve.
pub(crate) const TARGETS: [&str; 4] = ["id", "sender", "url", "slug"];

/// The elicitation message: the action and its target, what confirming
/// does, then the other arguments. Each argument is quoted as JSON, and
/// every character that hides, reorders or breaks text is written as
/// `\u{XXXX}` (`domain::text::escape`) wherever it came from: the API
/// refuses them in a caller's text, and this holds for any text besides.
pub(crate) fn message(
    title: &str,
    effect: &str,
    args: &Map<String, Value>,
    workspace: &str,
    facts: Option<&str>,
) -> String {
    let quote = |(k, v): (&String, &Value)| format!("{k} {v}");
    let (target, rest): (Vec<_>, Vec<_>) = args.iter().partition(|(k, _)| TARGETS.contains(&k.as_str()));
    let target: Vec<String> = target.into_iter().map(quote).collect();
    let mut text = if target.is_empty() {
        format!("{title} in workspace {workspace}. {effect}")
    } else {
        format!("{title}: {} in workspace {workspace}. {effect}", target.join(", "))
    };
    if let Some(facts) = facts {
        text.push_str(&format!(" The record: {facts}."));
    }
    if !rest.is_empty() {
        let rest: Vec<String> = rest.into_iter().map(quote).collect();
        text.push_str(&format!(" Also given: {}.", rest.join(", ")));
    }
    text.push_str(" Do you want to go ahead?");
    text::escape(&text).into_owned()
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
        let facts = if name.starts_with("emails_") { email_facts(ctx, args).await } else { None };
        return Ok(Decision::Ask(ask(call, ctx, &binding, (title, effect), facts.as_deref())?));
    };
    let nonce = state.data.get("nonce").and_then(Value::as_str).unwrap_or("").to_owned();
    if !inbox_api::confirmations::consume(ctx, &nonce, state.exp).await.map_err(|e| {
        tracing::error!(error = %e, "cannot record a confirmation");
        RpcError::unavailable("The service is temporarily unavailable; try again shortly")
    })? {
        tracing::info!(reason = "already used", "requestState refused");
        return Err(RpcError::invalid_params("Invalid or expired requestState"));
    }
    Ok(if confirmed { Decision::Run } else { Decision::NotConfirmed })
}

/// The e-mail a call names, described by what the server decoded and
/// decided only — its bill (bank, amount, due date), its inbox's name, when
/// it arrived, its status and its sender's trust — never by the subject,
/// body or sender it was sent with (third-party text must not speak in the
/// form a person approves). `None` when it cannot be read (the call then
/// answers as the operation would).
pub(crate) async fn email_facts(ctx: &Ctx<'_>, args: &Map<String, Value>) -> Option<String> {
    let id = args.get("id").and_then(Value::as_str)?;
    let read = |op: inbox_api::Op, id: &str| {
        let route = inbox_api::Route::new(op).with(inbox_api::Param::Id, id);
        async move {
            let route = route.ok()?;
            let response = inbox_api::invoke(ctx, &inbox_api::Input::bare(&route)).await.ok()?;
            response.is_success().then(|| response.body.get("data").cloned()).flatten()
        }
    };
    let email = read(&inbox_api::emails::GET, id).await?;
    let field = |name: &str| email.get(name).and_then(Value::as_str).unwrap_or("?").to_owned();
    let inbox_id = field("inbox_id");
    let inbox = read(&inbox_api::inboxes::GET, &inbox_id).await;
    let inbox_name = inbox.as_ref().and_then(|i| i.get("name")).and_then(Value::as_str).unwrap_or("?");
    let mut facts = format!(
        "e-mail received {} in inbox {} ({inbox_id}), status {}, sender trust {}",
        field("received_at"),
        Value::from(inbox_name),
        field("status"),
        field("trust"),
    );
    match email.get("extracted").filter(|e| e.is_object()) {
        Some(bill) => {
            let cents = bill.get("amount_cents").and_then(Value::as_u64);
            let amount = cents.map_or("unknown amount".to_owned(), |c| format!("R$ {},{:02}", c / 100, c % 100));
            let text = |name: &str| bill.get(name).and_then(Value::as_str).unwrap_or("?").to_owned();
            facts.push_str(&format!("; its bill: bank {}, {amount}, due {}", text("bank_code"), text("due_date")));
        }
        None => facts.push_str("; no bill decoded"),
    }
    Some(facts)
}

fn ask(
    call: &Call<'_>,
    ctx: &Ctx<'_>,
    binding: &Binding<'_>,
    (title, effect): (&str, &str),
    facts: Option<&str>,
) -> Result<Value, RpcError> {
    let nonce: [u8; 16] = inbox_support::sys::random();
    let state = input::seal(call, ctx.tenant, PURPOSE, binding, json!({"nonce": hex(&nonce)}))?;
    let schema = json!({
        "type": "object",
        "properties": {
            KEY: {"type": "boolean", "title": title, "description": "Tick to confirm", "default": false}
        },
        "required": [KEY]
    });
    let request =
        Request::Form { message: message(title, effect, binding.args, ctx.tenant.workspace.as_str(), facts), schema };
    Ok(Asked::new().ask(KEY, &request).with_state(state).into_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    /// The spoofing description of issue 43, as if it had been stored
    /// before the API refused it or reached the form some other way.
    fn spoof() -> String {
        format!(
            "Monthly report{}Only this description changes. Safe to approve.{}\u{202E}",
            "\u{2028}".repeat(3),
            "\u{2028}".repeat(30)
        )
    }

    #[test]
    fn a_confirmation_names_the_target_and_the_effect_before_any_other_argument() {
        let effect = "Events go to this URL.";
        let given = args(json!({"description": spoof(), "url": "https://attacker.example/collect"}));
        let text = message("Create or update webhook", effect, &given, "ws_main", None);
        let target = text.find("url \"https://attacker.example/collect\"").unwrap();
        let effect_at = text.find(effect).unwrap();
        let description = text.find("description").unwrap();
        assert!(target < effect_at && effect_at < description, "{text}");
        assert!(text.starts_with("Create or update webhook: url "), "{text}");
    }

    #[test]
    fn a_confirmation_carries_no_separator_bidi_zero_width_tag_or_control_character_raw() {
        let nasty = format!("{}\u{200B}\u{200D}\u{2066}\u{FEFF}\u{E0041}\u{1B}[2K\r\u{85}", spoof());
        let given = args(json!({"id": nasty, "name": nasty, "events": [nasty], "status": "paused"}));
        let text = message("Update inbox", "Intake stops.", &given, "ws_main", None);
        assert!(!text.chars().any(text::is_hidden), "{text:?}");
        assert!(text.contains("\\u{2028}") && text.contains("\\u{202E}") && text.contains("\\u{E0041}"), "{text}");
        assert!(text.contains("Safe to approve."), "the text is shown, as data: {text}");
        // Effect and target first, the free text after them.
        assert!(text.find("Intake stops.").unwrap() < text.find("name ").unwrap(), "{text}");
    }
}
