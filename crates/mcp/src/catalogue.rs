//! The tool catalogue: one row per tool of the product, read from the API's
//! operation declarations (`inbox_api::operations`, each with its
//! `inbox_api::operation::Tool`: name, title, agent-facing description,
//! annotations). Its input and output schemas are that operation's, from
//! `inbox_api::schemas` (`arguments`, `output`): the arguments named like the
//! operation's path parameters (`id`, `sender`) become them; the rest are the
//! query (GET and DELETE) or the JSON body (other methods);
//! `structuredContent` is the operation's answer.

use std::ops::Deref;

use serde_json::{Value, json};

use inbox_api::operation::Tool;
use inbox_api::{Op, operations};

/// One row of the catalogue: a tool and the operation it calls (whose
/// declaration has its method, path and requirement).
#[derive(Debug, Clone, Copy)]
pub struct ToolRow {
    pub op: Op,
    tool: &'static Tool,
}

impl Deref for ToolRow {
    type Target = Tool;

    fn deref(&self) -> &Tool {
        self.tool
    }
}

impl ToolRow {
    /// Read-only exactly when its operation changes nothing (a GET): one
    /// decision, the declaration's (`Operation::is_write`).
    pub fn read_only(&self) -> bool {
        !self.op.is_write()
    }

    /// Whether this call runs only once the user has confirmed it. The
    /// confirmation shows every argument, so the person sees what changes.
    pub fn needs_confirmation(&self, args: &serde_json::Map<String, Value>) -> bool {
        self.destructive && (self.confirm_when.is_empty() || self.confirm_when.iter().any(|a| args.contains_key(*a)))
    }
}

/// Every tool, in the declarations' order.
pub fn rows() -> Vec<ToolRow> {
    operations().filter_map(|op| op.tool.as_ref().map(|tool| ToolRow { op, tool })).collect()
}

/// A tool's input schema: the path, query and body parameters of its
/// operation, as `inbox_api::schemas` describes them.
pub fn arguments(op: Op) -> Value {
    let mut properties = serde_json::Map::new();
    let mut required: Vec<Value> = Vec::new();
    for (name, schema) in inbox_api::schemas::path_params(op) {
        properties.insert(name.into(), schema);
        required.push(Value::from(name));
    }
    for (name, schema) in inbox_api::schemas::query_params(op) {
        properties.insert(name.into(), schema);
    }
    if let Some(body) = inbox_api::schemas::body(op) {
        if let Some(Value::Object(fields)) = body.get("properties") {
            properties.extend(fields.clone());
        }
        if let Some(Value::Array(names)) = body.get("required") {
            required.extend(names.iter().cloned());
        }
    }
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// A tool's output schema: its operation's success answer, or, for a tool
/// the user must confirm, that or the answer to a declined confirmation.
pub fn output(row: &ToolRow) -> Value {
    let mut success = inbox_api::schemas::output(row.op);
    super::untrusted::schema(&mut success);
    if !row.destructive {
        return success;
    }
    let declined = json!({"type": "object", "properties": {"result": {"const": "not_confirmed"}, "message": {"type": "string"}},
                          "required": ["result", "message"], "additionalProperties": false});
    let mut alternatives = match success.get("anyOf") {
        Some(Value::Array(shapes)) => shapes.clone(),
        _ => vec![success],
    };
    alternatives.push(declined);
    json!({"type": "object", "anyOf": alternatives})
}
