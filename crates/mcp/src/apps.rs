//! MCP Apps (`io.modelcontextprotocol/ui`, views protocol 2026-01-26): two
//! views the server draws, for clients of protocol 2026-07-28 that declare
//! the extension with `text/html;profile=mcp-app` on the request (the
//! handshake era declares capabilities once, at `initialize`, which a
//! stateless server does not keep: it gets no views). Every other client
//! gets what it got before, byte for byte.
//!
//! - **The boleto card** (`ui://kobana-inbox/boleto-card.html`), linked from
//!   `emails_get`: amount, due date, bank, the digitable line and the Pix
//!   code with copy buttons, status and the sender's trust — the tool's
//!   result, drawn; no subject, no body.
//! - **The confirmation view** (`ui://kobana-inbox/confirmation.html`),
//!   linked from every destructive tool. For such a client a call that needs
//!   confirmation answers at once with a result saying so (nothing done),
//!   the facts of the confirmation form (`confirm`) as structured content,
//!   and a sealed token in the result's `_meta` (hosts keep `_meta` from the
//!   model). The person approves or declines in the view, which calls
//!   `confirmation_approve` or `confirmation_decline` — tools whose
//!   visibility is `["app"]`, so hosts offer them to views only — with the
//!   token. The token is a `requestState` by another name (`input::seal`,
//!   purpose `confirm-view`): bound to the caller, the workspace, the tool,
//!   a digest of its arguments, the connection's narrowing, an expiry, and a
//!   nonce consumed once, on approval or refusal. A client that answers
//!   through the form instead (`requestState` and `inputResponses`) still can.
//!
//! The pages are self-contained (no request leaves them: `connect-src
//! 'none'`, nothing loaded from elsewhere), carry their own
//! `Content-Security-Policy` with the SHA-256 of their one script and one
//! stylesheet (no `'unsafe-inline'`, no inline handlers), and write every
//! value with `textContent`: nothing in a result is ever read as markup.

use std::sync::LazyLock;

use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::era::UI_MIME;
use super::input::{self, Binding};
use super::jsonrpc::RpcError;
use super::method::Method;
use super::{Call, Outcome};
use inbox_api::Ctx;
use inbox_domain::Tenant;

pub const CARD_URI: &str = "ui://kobana-inbox/boleto-card.html";
pub const CONFIRM_URI: &str = "ui://kobana-inbox/confirmation.html";
/// The app-only tools of the confirmation view.
pub const APPROVE: &str = "confirmation_approve";
pub const DECLINE: &str = "confirmation_decline";
/// Where a pending confirmation's token travels: the result's `_meta`.
pub const TOKEN_META: &str = "br.com.kobana/confirmation";
/// The tool whose result the card draws.
pub const CARD_TOOL: &str = "emails_get";
const PURPOSE: &str = "confirm-view";

/// A view: its resource's URI, name and description, and its page.
pub struct View {
    pub uri: &'static str,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// What the host must allow besides the defaults (the card copies to the clipboard).
    pub clipboard: bool,
    pub html: String,
}

/// One page: the shared stylesheet and bridge, the view's script, and a
/// policy that allows exactly those two by their digests.
fn page(title: &str, main: &str, script: &str) -> String {
    let css = include_str!("apps/style.css");
    let js = format!("{}\n{script}", include_str!("apps/bridge.js"));
    let hash = |text: &str| base64::engine::general_purpose::STANDARD.encode(digest(&SHA256, text.as_bytes()).as_ref());
    let policy = format!(
        "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; img-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'",
        hash(&js),
        hash(css)
    );
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n<title>{title}</title>\n\
         <style>{css}</style>\n</head>\n<body>\n<main id=\"{main}\" aria-live=\"polite\"><p class=\"muted\">…</p></main>\n\
         <script>{js}</script>\n</body>\n</html>\n"
    )
}

/// Both views, made once per container.
pub static VIEWS: LazyLock<[View; 2]> = LazyLock::new(|| {
    [
        View {
            uri: CARD_URI,
            name: "boleto-card",
            title: "Boleto card",
            description: "An e-mail's bills as the server decoded them: amount, due date, bank, the digitable line and the Pix code to copy, status and the sender's trust.",
            clipboard: true,
            html: page("Boleto", "card", include_str!("apps/card.js")),
        },
        View {
            uri: CONFIRM_URI,
            name: "confirmation",
            title: "Confirmation",
            description: "What a destructive call will do, to what and where, from the server's facts; the person approves or declines it here.",
            clipboard: false,
            html: page("Confirmation", "confirm", include_str!("apps/confirm.js")),
        },
    ]
});

fn view(uri: &str) -> Option<&'static View> {
    VIEWS.iter().find(|v| v.uri == uri)
}

/// The view's `_meta.ui`: no domain beyond the defaults (it fetches
/// nothing), a border, and the clipboard where it copies.
fn ui_meta(view: &View) -> Value {
    let mut ui = Map::new();
    ui.insert("csp".into(), json!({"connectDomains": [], "resourceDomains": []}));
    ui.insert("prefersBorder".into(), Value::Bool(true));
    if view.clipboard {
        ui.insert("permissions".into(), json!({"clipboardWrite": {}}));
    }
    json!({"ui": ui})
}

/// `resources/read` of a view's URI, if it is one.
pub fn read(uri: &str) -> Option<Value> {
    let view = view(uri)?;
    Some(json!({"contents": [{
        "uri": view.uri, "mimeType": UI_MIME, "text": view.html, "_meta": ui_meta(view),
    }]}))
}

/// The views as `resources/list` entries (for clients that draw them).
pub fn listed() -> Vec<Value> {
    VIEWS
        .iter()
        .map(|v| {
            json!({"uri": v.uri, "name": v.name, "title": v.title, "description": v.description,
                   "mimeType": UI_MIME, "_meta": ui_meta(v)})
        })
        .collect()
}

/// The `_meta` that links a tool to its view, if it has one: the card for
/// `emails_get`, the confirmation view for destructive tools.
pub fn tool_meta(name: &str, destructive: bool) -> Option<Value> {
    let uri = if name == CARD_TOOL {
        CARD_URI
    } else if destructive {
        CONFIRM_URI
    } else {
        return None;
    };
    // `ui/resourceUri` is the older flat key, kept for hosts that read only it.
    Some(json!({"ui": {"resourceUri": uri, "visibility": ["model", "app"]}, "ui/resourceUri": uri}))
}

/// The structured content of a pending confirmation, as its output schema
/// says: one more shape a destructive tool may answer with for these clients.
pub fn pending_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "result": {"const": "confirmation_pending"},
            "message": {"type": "string"},
            "confirmation": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string"}, "title": {"type": "string"}, "effect": {"type": "string"},
                    "target": {"type": "object"}, "workspace": {"type": "string"}, "facts": {"type": ["string", "null"]},
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"},
                                  "description": "Every other argument of the call, as JSON text"},
                },
                "required": ["tool", "title", "effect", "target", "arguments", "workspace", "facts"],
                "additionalProperties": false,
            },
        },
        "required": ["result", "message", "confirmation"],
        "additionalProperties": false,
    })
}

/// A tool's output schema for a client that draws views: a destructive
/// tool may also answer that its confirmation is pending.
pub fn output(row: &super::catalogue::ToolRow) -> Value {
    let mut schema = super::catalogue::output(row);
    if row.destructive
        && let Some(Value::Array(shapes)) = schema.get_mut("anyOf")
    {
        shapes.push(pending_schema());
    }
    schema
}

/// The two app-only tools, as `tools/list` shows them to these clients.
pub fn app_tools() -> [Value; 2] {
    let schema = json!({
        "type": "object",
        "properties": {"token": {"type": "string", "minLength": 1, "maxLength": 65536,
                                 "description": "The token of the confirmation being answered (its result's _meta)"}},
        "required": ["token"],
        "additionalProperties": false,
    });
    let tool = |name: &str, title: &str, description: &str, destructive: bool| {
        json!({
            "name": name, "title": title, "description": description, "inputSchema": schema,
            "annotations": {"title": title, "readOnlyHint": false, "destructiveHint": destructive,
                            "idempotentHint": false, "openWorldHint": false},
            "_meta": {"ui": {"visibility": ["app"]}},
        })
    };
    [
        tool(
            APPROVE,
            "Approve",
            "Runs the call the person approved in the confirmation view. Called by that view only, with its token.",
            true,
        ),
        tool(
            DECLINE,
            "Decline",
            "Records that the person declined the call in the confirmation view: nothing is done, and the token can no longer be approved. Called by that view only.",
            false,
        ),
    ]
}

/// A destructive call from a client that draws views: nothing is done; the
/// result carries the confirmation's facts and its sealed token.
pub fn pending(
    call: &Call<'_>,
    tenant: &Tenant,
    (name, title, effect): (&str, &str, &str),
    args: &Map<String, Value>,
    facts: Option<&str>,
) -> Result<Outcome, RpcError> {
    let binding = Binding { method: Method::ToolsCall, name, args };
    let nonce = inbox_domain::hex(&inbox_support::sys::random::<16>());
    let data = json!({"nonce": nonce, "tool": name, "args": args});
    let token = input::seal(call, tenant, PURPOSE, &binding, data)?;
    let workspace = tenant.workspace.as_str();
    let message = super::confirm::message(title, effect, args, workspace, facts);
    let (target, given): (Map<String, Value>, Map<String, Value>) = args
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .partition(|(k, _)| super::confirm::TARGETS.contains(&k.as_str()));
    // Every other argument, as the form shows it: JSON, with any character
    // that hides, reorders or breaks text written `\u{XXXX}`.
    let given: Map<String, Value> = given
        .into_iter()
        .map(|(k, v)| {
            let shown = inbox_domain::text::escape(&v.to_string()).into_owned();
            (k, Value::from(shown))
        })
        .collect();
    let structured = json!({
        "result": "confirmation_pending",
        "message": message,
        "confirmation": {"tool": name, "title": title, "effect": effect, "target": target,
                         "arguments": given, "workspace": workspace, "facts": facts},
    });
    let text = format!(
        "Nothing was done yet: the person approves or declines this in the confirmation view. Do not call {name} again for it. {message}"
    );
    Ok(Outcome::Complete(json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": false,
        "_meta": {TOKEN_META: {"token": token}},
    })))
}

/// What an answer from the confirmation view comes to.
pub enum Answered {
    /// Approved: run `tool` with `args`, as confirmed.
    Run { tool: String, args: Map<String, Value> },
    /// Declined: nothing is done.
    Declined,
}

/// Reads an answer (`confirmation_approve` or `confirmation_decline` with
/// `{token}`): the token must open, be bound to this caller, workspace and
/// connection, be unexpired and unused; it is then used up. Every failure
/// is -32602 `Invalid or expired requestState`, as for the form's state.
pub async fn answer(call: &Call<'_>, ctx: &Ctx<'_>, tenant: &Tenant, approve: bool) -> Result<Answered, RpcError> {
    let args = match call.message.params.get("arguments") {
        Some(Value::Object(args)) => args,
        _ => return Err(RpcError::invalid_params("arguments must be an object with the token")),
    };
    let refused = || {
        tracing::info!(reason = "unreadable view token", "requestState refused");
        RpcError::invalid_params("Invalid or expired requestState")
    };
    let token = match (args.get("token"), args.len()) {
        (Some(Value::String(token)), 1) if token.len() <= 65_536 => token,
        _ => return Err(RpcError::invalid_params("arguments must be {\"token\": string}")),
    };
    // What the token names (read first: the binding is made from it), then
    // the token checked against this request as any state is.
    let payload = call.server.secrets.open_token(PURPOSE, token).ok_or_else(refused)?;
    let data = payload.get("data").cloned().unwrap_or(Value::Null);
    let (Some(tool), Some(Value::Object(original))) = (data.get("tool").and_then(Value::as_str), data.get("args"))
    else {
        return Err(refused());
    };
    let binding = Binding { method: Method::ToolsCall, name: tool, args: original };
    let opened = input::open_token(call, tenant, PURPOSE, token, &binding)?;
    let nonce = data.get("nonce").and_then(Value::as_str).unwrap_or_default();
    let fresh = inbox_api::confirmations::consume(ctx, nonce, opened.exp).await.map_err(|e| {
        tracing::error!(error = %e, "cannot record a confirmation");
        RpcError::unavailable("The service is temporarily unavailable; try again shortly")
    })?;
    if !fresh {
        tracing::info!(reason = "already used", "requestState refused");
        return Err(RpcError::invalid_params("Invalid or expired requestState"));
    }
    Ok(if approve { Answered::Run { tool: tool.to_owned(), args: original.clone() } } else { Answered::Declined })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_page_allows_exactly_its_own_script_and_style_and_nothing_else() {
        for view in VIEWS.iter() {
            let html = &view.html;
            let policy = html.split("Content-Security-Policy\" content=\"").nth(1).and_then(|r| r.split('"').next());
            let policy = policy.unwrap_or_default();
            assert!(!policy.contains("unsafe"), "{}: {policy}", view.uri);
            let between = |open: &str, close: &str| html.split(open).nth(1).and_then(|r| r.split(close).next());
            let hash = |text: &str| {
                base64::engine::general_purpose::STANDARD.encode(digest(&SHA256, text.as_bytes()).as_ref())
            };
            let script = between("<script>", "</script>").unwrap_or_default();
            let style = between("<style>", "</style>").unwrap_or_default();
            assert!(policy.contains(&format!("script-src 'sha256-{}'", hash(script))), "{}", view.uri);
            assert!(policy.contains(&format!("style-src 'sha256-{}'", hash(style))), "{}", view.uri);
            assert_eq!(html.matches("<script").count(), 1, "one script, inline: {}", view.uri);
            // Nothing loaded from elsewhere, no inline handler, no markup from values.
            for banned in
                ["src=", "href=", "http://", "https://", "innerHTML", "outerHTML", "insertAdjacentHTML", "eval("]
            {
                assert!(!html.contains(banned), "{}: {banned}", view.uri);
            }
            let handler = html.split(|c: char| c.is_whitespace()).any(|w| w.starts_with("on") && w.contains("=\""));
            assert!(!handler, "{}: an inline event handler", view.uri);
        }
    }

    #[test]
    fn only_the_card_tool_and_destructive_tools_have_a_view() {
        assert_eq!(tool_meta("emails_get", false).unwrap()["ui"]["resourceUri"], CARD_URI);
        assert_eq!(tool_meta("emails_delete", true).unwrap()["ui/resourceUri"], CONFIRM_URI);
        assert!(tool_meta("emails_list", false).is_none());
        assert!(read("ui://kobana-inbox/other.html").is_none());
        assert_eq!(read(CARD_URI).unwrap()["contents"][0]["mimeType"], UI_MIME);
    }
}
