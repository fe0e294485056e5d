//! Resources: the fixed documents (the current workspace, and two Markdown
//! guides), and the templates for single records, read through the same
//! REST GET routes the tools use. Lists show only what the caller's scopes
//! can read. "Not found" is `-32602` in
//! the stateless era and `-32002` in the handshake era, always with
//! `data.uri`; an unreadable resource gets the same answer as a missing one.

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value, json};

use super::Call;
use super::era::{Era, ProtocolVersion};
use super::jsonrpc::RpcError;
use inbox_api::error::ApiError;
use inbox_api::{self as api, Input, Op, Param, Route};
use inbox_auth::Principal;
use inbox_domain::{Scope, Tenant};

/// A fixed document.
struct Document {
    uri: &'static str,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    mime_type: &'static str,
    text: &'static str,
}

const DOCUMENTS: &[Document] = &[
    Document {
        uri: "kobana://inbox/docs/email-statuses",
        name: "email-statuses",
        title: "E-mail statuses",
        description: "What each e-mail status means and what can be done about it.",
        mime_type: "text/markdown",
        text: include_str!("docs/email-statuses.md"),
    },
    Document {
        uri: "kobana://inbox/docs/webhook-signatures",
        name: "webhook-signatures",
        title: "Webhook signatures",
        description: "How webhook deliveries are signed and how to verify them.",
        mime_type: "text/markdown",
        text: include_str!("docs/webhook-signatures.md"),
    },
];

/// A resource template, read through the API operation it names.
struct Template {
    uri_template: &'static str,
    /// `kobana://inbox/{collection}/{id}`.
    collection: &'static str,
    /// The operation that reads the record `{id}`.
    get: Op,
    /// The operation that lists such records (what completions offer).
    list: Option<Op>,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// Any one of these scopes lets the caller read it.
    scopes: &'static [Scope],
}

static TEMPLATES: &[Template] = &[
    Template {
        uri_template: "kobana://inbox/emails/{id}",
        collection: "emails",
        get: &api::emails::GET,
        list: Some(&api::emails::LIST),
        name: "email",
        title: "E-mail",
        description: "One e-mail with its extracted boleto data. Subject and body are third-party text.",
        scopes: &[Scope::EmailsRead],
    },
    Template {
        uri_template: "kobana://inbox/inboxes/{id}",
        collection: "inboxes",
        get: &api::inboxes::GET,
        list: Some(&api::inboxes::LIST),
        name: "inbox",
        title: "Inbox",
        description: "One inbox: slug, name, status and sender policy.",
        scopes: &[Scope::InboxesRead],
    },
    Template {
        uri_template: "kobana://inbox/webhooks/{id}",
        collection: "webhooks",
        get: &api::webhooks::GET,
        list: Some(&api::webhooks::LIST),
        name: "webhook",
        title: "Webhook",
        description: "One webhook (never its secret).",
        scopes: &[Scope::WebhooksRead],
    },
    Template {
        uri_template: "kobana://inbox/jobs/{id}",
        collection: "jobs",
        get: &api::jobs::GET,
        // Jobs have no list: nothing to suggest.
        list: None,
        name: "job",
        title: "Job",
        description: "The status and result of a long operation.",
        scopes: &[Scope::EmailsRead, Scope::WebhooksRead],
    },
    Template {
        uri_template: "kobana://inbox/audit/{id}",
        collection: "audit",
        get: &api::audit::GET,
        // The newest records (ids begin with their time, so a prefix narrows them).
        list: Some(&api::audit::LIST),
        name: "audit-record",
        title: "Audit record",
        description: "One change in the workspace's audit trail: who, through what, on which record, how it ended (workspace admins).",
        scopes: &[Scope::AuditRead],
    },
];

pub const WORKSPACE_URI: &str = "kobana://inbox/workspace";
const WORKSPACE_SCOPES: [Scope; 2] = [Scope::InboxesRead, Scope::EmailsRead];

pub struct Resources {
    listed: [Vec<Value>; 3],
    workspace: [Value; 3],
    templates: [Vec<(&'static Template, Value)>; 3],
}

impl Default for Resources {
    fn default() -> Self {
        Self::new()
    }
}

fn titled(entry: &mut Map<String, Value>, version: ProtocolVersion, title: &str) {
    if version != ProtocolVersion::V2025_03_26 {
        entry.insert("title".into(), Value::from(title));
    }
}

impl Resources {
    pub fn new() -> Self {
        let listed = ProtocolVersion::SUPPORTED.map(|v| DOCUMENTS.iter().map(|d| render(d, v)).collect());
        let workspace = ProtocolVersion::SUPPORTED.map(|v| {
            let mut entry = Map::new();
            entry.insert("uri".into(), Value::from(WORKSPACE_URI));
            entry.insert("name".into(), Value::from("workspace"));
            titled(&mut entry, v, "Current workspace");
            entry.insert("description".into(), Value::from("The workspace's inboxes and e-mail counts by status."));
            entry.insert("mimeType".into(), Value::from("application/json"));
            Value::Object(entry)
        });
        let templates = ProtocolVersion::SUPPORTED.map(|v| {
            TEMPLATES
                .iter()
                .map(|t| {
                    let mut entry = Map::new();
                    entry.insert("uriTemplate".into(), Value::from(t.uri_template));
                    entry.insert("name".into(), Value::from(t.name));
                    titled(&mut entry, v, t.title);
                    entry.insert("description".into(), Value::from(t.description));
                    entry.insert("mimeType".into(), Value::from("application/json"));
                    (t, Value::Object(entry))
                })
                .collect()
        });
        Self { listed, workspace, templates }
    }

    /// The fixed resources this caller may read.
    pub fn list(&self, version: ProtocolVersion, principal: &Principal) -> Vec<Value> {
        let mut list = Vec::with_capacity(DOCUMENTS.len() + 1);
        if WORKSPACE_SCOPES.iter().all(|s| principal.has(*s)) {
            list.push(version.pick(&self.workspace).clone());
        }
        list.extend(version.pick(&self.listed).iter().cloned());
        list
    }

    /// The templates this caller may read.
    pub fn templates(&self, version: ProtocolVersion, principal: &Principal) -> Vec<Value> {
        version
            .pick(&self.templates)
            .iter()
            .filter(|(t, _)| t.scopes.iter().any(|s| principal.has(*s)))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// For one of the templates: the operation that lists its records, if
    /// any; `None` for a URI that is not a template.
    pub fn template_list(uri_template: &str) -> Option<Option<Op>> {
        TEMPLATES.iter().find(|t| t.uri_template == uri_template).map(|t| t.list)
    }

    pub async fn read(&self, call: &Call<'_>, tenant: &Tenant) -> Result<Value, RpcError> {
        let Some(Value::String(uri)) = call.message.params.get("uri") else {
            return Err(RpcError::invalid_params("resources/read needs params.uri as a string"));
        };
        if let Some(doc) = DOCUMENTS.iter().find(|d| d.uri == uri) {
            return Ok(json!({"contents": [{"uri": doc.uri, "mimeType": doc.mime_type, "text": doc.text}]}));
        }
        let (route, scopes): (Route, &[Scope]) = if uri == WORKSPACE_URI {
            (Route::new(&api::workspace::GET), &WORKSPACE_SCOPES)
        } else {
            let Some((template, id)) = uri.strip_prefix("kobana://inbox/").and_then(|rest| {
                let (collection, id) = rest.split_once('/')?;
                let template = TEMPLATES.iter().find(|t| t.collection == collection)?;
                // The id is one segment of the URI, percent-decoded like a
                // path's: it names a record, never another operation.
                let id = percent_decode_str(id).decode_utf8_lossy();
                (!id.is_empty() && !id.contains('/')).then_some((template, id))
            }) else {
                return Err(not_found(call.era, uri));
            };
            let Ok(route) = Route::new(template.get).with(Param::Id, id) else {
                return Err(super::results::unavailable());
            };
            (route, template.scopes)
        };
        // A scope gap is a step-up challenge, as for tools.
        let readable = if uri == WORKSPACE_URI {
            scopes.iter().all(|s| call.principal.has(*s))
        } else {
            scopes.iter().any(|s| call.principal.has(*s))
        };
        // Outside a narrowed connection's toolsets, a resource is not there.
        if !readable && call.narrowing.is_narrowed() {
            return Err(not_found(call.era, uri));
        }
        if !readable {
            let missing: Vec<Scope> = scopes.iter().copied().filter(|s| !call.principal.has(*s)).collect();
            return Err(super::results::step_up(call, &missing));
        }
        let ctx = call.api_ctx(tenant, super::method::Method::ResourcesRead.as_str());
        let response = match api::invoke(&ctx, &Input::bare(&route)).await {
            Ok(response) if response.is_success() => response,
            Err(ApiError::InsufficientScope { scopes }) => return Err(super::results::step_up(call, &scopes)),
            Err(ApiError::Unavailable) => return Err(super::results::unavailable()),
            // Missing and unreadable look the same.
            Ok(_) | Err(_) => return Err(not_found(call.era, uri)),
        };
        let text = match super::untrusted::resource(&response.body, call.content_policy(tenant)) {
            Some(rewritten) => rewritten.to_string(),
            None => response.body.to_string(),
        };
        Ok(json!({"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}))
    }
}

/// "Resource not found" in the code of the era.
pub fn not_found(era: Era, uri: &str) -> RpcError {
    era.resource_not_found(uri)
}

fn render(doc: &Document, version: ProtocolVersion) -> Value {
    let mut entry = Map::new();
    entry.insert("uri".into(), Value::from(doc.uri));
    entry.insert("name".into(), Value::from(doc.name));
    if version != ProtocolVersion::V2025_03_26 {
        entry.insert("title".into(), Value::from(doc.title));
    }
    entry.insert("description".into(), Value::from(doc.description));
    entry.insert("mimeType".into(), Value::from(doc.mime_type));
    Value::Object(entry)
}
