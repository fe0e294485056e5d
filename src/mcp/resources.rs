//! Resources: the fixed documents served by `resources/list` and
//! `resources/read`, and the resource templates. "Not found" is `-32602` in
//! the stateless era and `-32002` in the handshake era, always with
//! `data.uri`; an unreadable resource gets the same answer as a missing one.

use serde_json::{Map, Value, json};

use super::Call;
use super::era::{Era, ProtocolVersion};
use super::jsonrpc::{ErrorCode, RpcError};
use super::methods::invalid_params;

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

pub struct Resources {
    listed: [Vec<Value>; 3],
}

impl Default for Resources {
    fn default() -> Self {
        Self::new()
    }
}

impl Resources {
    pub fn new() -> Self {
        let listed = ProtocolVersion::SUPPORTED.map(|v| DOCUMENTS.iter().map(|d| render(d, v)).collect());
        Self { listed }
    }

    pub fn list(&self, version: ProtocolVersion) -> Vec<Value> {
        let index = ProtocolVersion::SUPPORTED.iter().position(|v| *v == version).unwrap_or(0);
        self.listed[index].clone()
    }

    /// Templates are served with the records they read.
    pub fn templates(&self, _version: ProtocolVersion) -> Vec<Value> {
        Vec::new()
    }

    pub fn read(&self, call: &Call<'_>) -> Result<Value, RpcError> {
        let Some(Value::String(uri)) = call.message.params.get("uri") else {
            return Err(invalid_params("resources/read needs params.uri as a string"));
        };
        match DOCUMENTS.iter().find(|d| d.uri == uri) {
            Some(doc) => Ok(json!({"contents": [{"uri": doc.uri, "mimeType": doc.mime_type, "text": doc.text}]})),
            None => Err(not_found(call.era, uri)),
        }
    }
}

/// "Resource not found" in the code of the era.
pub fn not_found(era: Era, uri: &str) -> RpcError {
    let code = match era {
        Era::Stateless => ErrorCode::INVALID_PARAMS,
        Era::Handshake(_) => ErrorCode::RESOURCE_NOT_FOUND,
    };
    RpcError::new(200, code, "Resource not found").with_data(json!({"uri": uri}))
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
