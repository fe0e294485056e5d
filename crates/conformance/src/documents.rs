//! The fixtures' resources, prompts and completions.
//!
//! - Resources: `test://static-text`, `test://static-binary` (the PNG),
//!   `test://watched-resource` and the template `test://template/{id}/data`;
//!   plus `test://confirmed-resource`, which asks for a confirmation first
//!   (`input_required` on `resources/read`). Anything else is the era's
//!   "not found", with the URI.
//! - Prompts: `test_simple_prompt`, `test_prompt_with_arguments` (`arg1`,
//!   `arg2`), `test_prompt_with_embedded_resource` (`resourceUri`),
//!   `test_prompt_with_image`, and `test_input_required_result_prompt`, which
//!   asks for a context first (`input_required` on `prompts/get`).
//! - Completions: the prompt arguments and the template's `{id}`, by prefix.

use serde_json::{Map, Value, json};

use super::tools::{confirm_form, describe};
use super::{PNG_BASE64, embedded, image, text};
use inbox_domain::Tenant;
use inbox_mcp::completion::completion_result;
use inbox_mcp::era::{Era, ProtocolVersion};
use inbox_mcp::input::{self, Elicited, Request, Responses};
use inbox_mcp::jsonrpc::RpcError;
use inbox_mcp::{Call, Outcome};

struct Resource {
    uri: &'static str,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    mime_type: &'static str,
}

const RESOURCES: &[Resource] = &[
    Resource {
        uri: "test://static-text",
        name: "static-text",
        title: "Static text",
        description: "A static text resource.",
        mime_type: "text/plain",
    },
    Resource {
        uri: "test://static-binary",
        name: "static-binary",
        title: "Static binary",
        description: "A static PNG image.",
        mime_type: "image/png",
    },
    Resource {
        uri: "test://watched-resource",
        name: "watched-resource",
        title: "Watched resource",
        description: "A resource clients may watch (this server sends no update notifications).",
        mime_type: "text/plain",
    },
    Resource {
        uri: "test://confirmed-resource",
        name: "confirmed-resource",
        title: "Confirmed resource",
        description: "Asks the user to confirm before it is read (protocol 2026-07-28).",
        mime_type: "text/plain",
    },
];

const TEMPLATE: &str = "test://template/{id}/data";

struct Argument {
    name: &'static str,
    description: &'static str,
}

struct Prompt {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [Argument],
}

const PROMPTS: &[Prompt] = &[
    Prompt {
        name: "test_simple_prompt",
        title: "Simple prompt",
        description: "A prompt without arguments.",
        arguments: &[],
    },
    Prompt {
        name: "test_prompt_with_arguments",
        title: "Prompt with arguments",
        description: "A prompt with two required arguments.",
        arguments: &[
            Argument { name: "arg1", description: "First test argument" },
            Argument { name: "arg2", description: "Second test argument" },
        ],
    },
    Prompt {
        name: "test_prompt_with_embedded_resource",
        title: "Prompt with a resource",
        description: "A prompt embedding the resource it is given.",
        arguments: &[Argument { name: "resourceUri", description: "URI of the resource to embed" }],
    },
    Prompt {
        name: "test_prompt_with_image",
        title: "Prompt with an image",
        description: "A prompt with an image.",
        arguments: &[],
    },
    Prompt {
        name: "test_input_required_result_prompt",
        title: "Prompt that asks",
        description: "Asks the user for a context first (protocol 2026-07-28).",
        arguments: &[],
    },
];

/// Candidate completions of the prompt arguments.
const WORDS: &[&str] = &["paris", "park", "party", "test-value-1", "test-value-2"];
/// Candidate template ids.
const IDS: &[&str] = &["1", "2", "3", "123"];

/// The listings, rendered once per protocol version.
pub struct Documents {
    resources: [Vec<Value>; 3],
    templates: [Vec<Value>; 3],
    prompts: [Vec<Value>; 3],
}

impl Default for Documents {
    fn default() -> Self {
        Self::new()
    }
}

fn titled(entry: &mut Map<String, Value>, version: ProtocolVersion, title: &str) {
    if version != ProtocolVersion::V2025_03_26 {
        entry.insert("title".into(), Value::from(title));
    }
}

impl Documents {
    pub fn new() -> Self {
        let resources = ProtocolVersion::SUPPORTED.map(|version| {
            RESOURCES
                .iter()
                .map(|r| {
                    let mut entry = Map::new();
                    entry.insert("uri".into(), Value::from(r.uri));
                    entry.insert("name".into(), Value::from(r.name));
                    titled(&mut entry, version, r.title);
                    entry.insert("description".into(), Value::from(r.description));
                    entry.insert("mimeType".into(), Value::from(r.mime_type));
                    Value::Object(entry)
                })
                .collect()
        });
        let templates = ProtocolVersion::SUPPORTED.map(|version| {
            let mut entry = Map::new();
            entry.insert("uriTemplate".into(), Value::from(TEMPLATE));
            entry.insert("name".into(), Value::from("template-data"));
            titled(&mut entry, version, "Template data");
            entry.insert("description".into(), Value::from("Data for an id, substituted into the URI."));
            entry.insert("mimeType".into(), Value::from("application/json"));
            vec![Value::Object(entry)]
        });
        let prompts = ProtocolVersion::SUPPORTED.map(|version| {
            PROMPTS
                .iter()
                .map(|p| {
                    let arguments: Vec<Value> = p
                        .arguments
                        .iter()
                        .map(|a| json!({"name": a.name, "description": a.description, "required": true}))
                        .collect();
                    let mut entry = Map::new();
                    entry.insert("name".into(), Value::from(p.name));
                    titled(&mut entry, version, p.title);
                    entry.insert("description".into(), Value::from(p.description));
                    entry.insert("arguments".into(), Value::Array(arguments));
                    Value::Object(entry)
                })
                .collect()
        });
        Documents { resources, templates, prompts }
    }

    pub fn resources(&self, version: ProtocolVersion) -> Vec<Value> {
        version.pick(&self.resources).clone()
    }

    pub fn templates(&self, version: ProtocolVersion) -> Vec<Value> {
        version.pick(&self.templates).clone()
    }

    pub fn prompts(&self, version: ProtocolVersion) -> Vec<Value> {
        version.pick(&self.prompts).clone()
    }
}

/// What a request that would ask for input answers in the handshake era.
fn cannot_ask(what: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "{what} asks the client for input first, which needs protocol 2026-07-28 (this server opens no stream)"
    ))
}

/// The id of a template URI, if `uri` is one.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri.strip_prefix("test://template/")?.strip_suffix("/data")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// `resources/read`.
pub fn read(call: &Call<'_>, tenant: &Tenant) -> Result<Outcome, RpcError> {
    let Some(Value::String(uri)) = call.message.params.get("uri") else {
        return Err(RpcError::invalid_params("resources/read needs params.uri as a string"));
    };
    let contents = match uri.as_str() {
        "test://static-text" => {
            json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
        }
        "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG_BASE64}),
        "test://watched-resource" => json!({"uri": uri, "mimeType": "text/plain", "text": "The watched resource."}),
        "test://confirmed-resource" => return confirmed_resource(call, tenant, uri),
        _ => match template_id(uri) {
            Some(id) => {
                let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                json!({"uri": uri, "mimeType": "application/json", "text": data.to_string()})
            }
            None => return Err(call.era.resource_not_found(uri)),
        },
    };
    Ok(Outcome::Complete(json!({"contents": [contents]})))
}

/// A resource read only once the user confirmed it.
fn confirmed_resource(call: &Call<'_>, _tenant: &Tenant, uri: &str) -> Result<Outcome, RpcError> {
    if call.era != Era::Stateless {
        return Err(cannot_ask(uri));
    }
    match Responses::read(&call.message.params)?.elicitation("confirm")? {
        Some(Elicited::Accepted(content)) if content.get("confirm") == Some(&Value::Bool(true)) => {
            let contents = json!({"uri": uri, "mimeType": "text/plain", "text": "Read after the user confirmed."});
            Ok(Outcome::Complete(json!({"contents": [contents]})))
        }
        Some(answer) => Err(RpcError::invalid_params(format!("The read was not confirmed ({})", describe(&answer)))),
        None => {
            input::require(call, input::Capability::FormElicitation, "Reading it needs form elicitation")?;
            Ok(input::Asked::new().ask("confirm", &confirm_form("Read the confirmed resource?")).outcome())
        }
    }
}

/// `prompts/get`.
pub fn get_prompt(call: &Call<'_>, _tenant: &Tenant) -> Result<Outcome, RpcError> {
    let params = &call.message.params;
    let Some(Value::String(name)) = params.get("name") else {
        return Err(RpcError::invalid_params("prompts/get needs params.name as a string"));
    };
    let Some(prompt) = PROMPTS.iter().find(|p| p.name == name) else {
        return Err(RpcError::invalid_params(format!("Unknown prompt: {name}")).with_data(json!({"name": name})));
    };
    let empty = Map::new();
    let args = match params.get("arguments") {
        None => &empty,
        Some(Value::Object(args)) => args,
        Some(_) => return Err(RpcError::invalid_params("prompts/get needs params.arguments as an object")),
    };
    let arg = |name: &str| args.get(name).and_then(Value::as_str);
    if let Some(missing) = prompt.arguments.iter().find(|a| arg(a.name).is_none()) {
        return Err(RpcError::invalid_params(format!("Missing required argument: {}", missing.name))
            .with_data(json!({"missing": missing.name})));
    }
    let user = |content: Value| json!({"role": "user", "content": content});
    let messages = match prompt.name {
        "test_prompt_with_arguments" => vec![user(text(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1").unwrap_or(""),
            arg("arg2").unwrap_or("")
        )))],
        "test_prompt_with_embedded_resource" => vec![
            user(embedded(arg("resourceUri").unwrap_or(""), "text/plain", "Embedded resource content for testing.")),
            user(text("Please process the embedded resource above.")),
        ],
        "test_prompt_with_image" => vec![user(image()), user(text("Please analyze the image above."))],
        "test_input_required_result_prompt" => {
            if call.era != Era::Stateless {
                return Err(cannot_ask(prompt.name));
            }
            match Responses::read(params)?.elicitation("user_context")? {
                Some(Elicited::Accepted(content)) => {
                    let context = content.get("context").and_then(Value::as_str).unwrap_or("none");
                    vec![user(text(format!("Use this context: {context}")))]
                }
                Some(_) => vec![user(text("No context was given."))],
                None => {
                    let form = Request::Form {
                        message: "What context should the prompt use?".to_owned(),
                        schema: json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}),
                    };
                    input::require(call, form.capability(), "This prompt needs form elicitation")?;
                    return Ok(input::Asked::new().ask("user_context", &form).outcome());
                }
            }
        }
        _ => vec![user(text("This is a simple prompt for testing."))],
    };
    Ok(Outcome::Complete(json!({"description": prompt.description, "messages": messages})))
}

/// `completion/complete`.
pub fn complete(call: &Call<'_>) -> Result<Value, RpcError> {
    let params = &call.message.params;
    let Some(Value::Object(reference)) = params.get("ref") else {
        return Err(RpcError::invalid_params("completion/complete needs params.ref as an object"));
    };
    let Some(Value::Object(argument)) = params.get("argument") else {
        return Err(RpcError::invalid_params("completion/complete needs params.argument as an object"));
    };
    let (Some(Value::String(name)), Some(Value::String(prefix))) = (argument.get("name"), argument.get("value")) else {
        return Err(RpcError::invalid_params("completion/complete needs argument.name and argument.value as strings"));
    };
    let candidates: &[&str] = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let prompt = reference
                .get("name")
                .and_then(Value::as_str)
                .and_then(|n| PROMPTS.iter().find(|p| p.name == n))
                .ok_or_else(|| RpcError::invalid_params("ref/prompt names no prompt of this server"))?;
            if !prompt.arguments.iter().any(|a| a.name == name) {
                return Err(RpcError::invalid_params(format!("Prompt {} has no argument {name}", prompt.name)));
            }
            WORDS
        }
        Some("ref/resource") if reference.get("uri").and_then(Value::as_str) == Some(TEMPLATE) => {
            if name != "id" {
                return Err(RpcError::invalid_params(format!("Template {TEMPLATE} has no variable {name}")));
            }
            IDS
        }
        Some("ref/resource") => return Err(RpcError::invalid_params("ref/resource names no template of this server")),
        _ => return Err(RpcError::invalid_params("ref.type must be ref/prompt or ref/resource")),
    };
    let prefix = prefix.to_lowercase();
    let values = candidates.iter().filter(|c| c.starts_with(&prefix)).map(|c| (*c).to_owned()).collect();
    Ok(completion_result(values))
}
