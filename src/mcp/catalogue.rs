//! The tool table. Each tool is one row of data: name, title, description
//! written for an agent, input JSON Schema and the four annotations. Rendering
//! per protocol version (2025-03-26 has no `title`) happens here, once per
//! container; `tools/call` looks the row up and validates the call's shape.

use serde_json::{Map, Value, json};

use super::era::ProtocolVersion;
use super::methods::invalid_params;
use super::{Call, Outcome};
use crate::mcp::jsonrpc::RpcError;

/// One tool of the catalogue.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub input_schema: Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

impl Tool {
    /// The `tools/list` entry in the shape of `version`.
    fn render(&self, version: ProtocolVersion) -> Value {
        let mut entry = Map::new();
        entry.insert("name".into(), Value::from(self.name));
        if version != ProtocolVersion::V2025_03_26 {
            entry.insert("title".into(), Value::from(self.title));
        }
        entry.insert("description".into(), Value::from(self.description));
        entry.insert("inputSchema".into(), self.input_schema.clone());
        entry.insert(
            "annotations".into(),
            json!({
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive,
                "idempotentHint": self.idempotent,
                "openWorldHint": false,
            }),
        );
        Value::Object(entry)
    }
}

/// The tools, in their stable listing order, with their per-version renderings.
pub struct Catalogue {
    tools: Vec<Tool>,
    rendered: [Vec<Value>; 3],
}

impl Default for Catalogue {
    fn default() -> Self {
        Self::new()
    }
}

impl Catalogue {
    pub fn new() -> Self {
        Self::from_tools(tools())
    }

    pub fn from_tools(tools: Vec<Tool>) -> Self {
        let rendered = ProtocolVersion::SUPPORTED.map(|v| tools.iter().map(|t| t.render(v)).collect());
        Self { tools, rendered }
    }

    pub fn find(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The listing for `version`, in catalogue order.
    pub fn list(&self, version: ProtocolVersion) -> Vec<Value> {
        let index = ProtocolVersion::SUPPORTED.iter().position(|v| *v == version).unwrap_or(0);
        self.rendered[index].clone()
    }

    /// `tools/call`: validate the request's shape, then find the tool.
    pub async fn call(&self, call: &Call<'_>) -> Result<Outcome, RpcError> {
        let params = &call.message.params;
        let Some(Value::String(name)) = params.get("name") else {
            return Err(invalid_params("tools/call needs params.name as a string"));
        };
        if params.get("arguments").is_some_and(|a| !a.is_object()) {
            return Err(invalid_params("tools/call needs params.arguments as an object"));
        }
        match self.find(name) {
            None => Err(invalid_params(format!("Unknown tool: {name}")).with_data(json!({"name": name}))),
            Some(tool) => Err(invalid_params(format!("Tool {} cannot be called on this server", tool.name))),
        }
    }
}

/// The product's tools. The table is filled by the REST routes the tools mirror.
fn tools() -> Vec<Tool> {
    Vec::new()
}
