//! The fixture tools: one row per tool the conformance runner calls (its
//! scenario descriptions say what each answers), and what a call does in
//! each era.
//!
//! - Content tools answer at once, in both eras.
//! - Tools that ask the client for input answer `input_required` in the
//!   stateless era (`inbox_mcp::input`: form elicitation, and the requests
//!   of `super::requests`; with a sealed `requestState` where a round must
//!   trust the one before),
//!   -32021 when the client did not declare what they would ask for, and a
//!   tool error in the handshake era (asking there needs a server-to-client
//!   request on a stream, which this server never opens).
//! - Task tools (`Tasks::Optional`, `Tasks::Required`) become tasks over the
//!   job queue (`inbox_mcp::tasks::start`: jobs of the extension kind
//!   `super::KIND`, run by `super::jobs`) for a
//!   client that declared the tasks extension on the request. Without it an
//!   optional one runs in the request and a required one is -32021 (a tool
//!   error in the handshake era, which has no such code).

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::requests::{self, listed_roots, question, sampled};
use super::{KIND, call_result, embedded, image, text};
use inbox_domain::Tenant;
use inbox_mcp::era::{EXT_TASKS, Era, ProtocolVersion};
use inbox_mcp::input::{self, Asked, Binding, Elicited, Request, Responses};
use inbox_mcp::jsonrpc::RpcError;
use inbox_mcp::method::Method;
use inbox_mcp::{Call, Outcome, tasks};

/// What a tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    SimpleText,
    Image,
    Audio,
    EmbeddedResource,
    MixedContent,
    ErrorResult,
    /// Would send progress notifications; answers without them.
    Progress,
    /// Would send log notifications; answers without them.
    Logging,
    Sampling,
    Elicitation,
    ElicitationDefaults,
    ElicitationEnums,
    /// Needs the sampling capability (-32021 without it).
    NeedsSampling,
    /// Needs form elicitation (-32021 without it), then asks.
    StreamingElicitation,
    /// Keeps a JSON Schema 2020-12 input schema as it is.
    Schema2020,
    /// Mirrors an argument into a custom header (`x-mcp-header`).
    HeaderParam,
    AskName,
    AskCapital,
    AskRoots,
    /// One round with a sealed state (`request_state`, `tampered_state`).
    AskWithState,
    AskThree,
    AskTwoRounds,
    /// Asks only for what the client declared.
    AskDeclared,
    Greet,
    SlowCompute,
    FailingJob,
    ProtocolErrorJob,
    ConfirmDelete,
    MultiInput,
    /// Asks for a name, then continues as a task.
    AskThenTask,
}

/// Whether a tool runs as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tasks {
    Never,
    /// A task when the client declared the extension; otherwise in the request.
    Optional,
    /// Only as a task.
    Required,
}

/// One fixture tool.
pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Value,
    pub read_only: bool,
    pub tasks: Tasks,
    /// Arguments mirrored into `Mcp-Param-{name}` headers.
    pub headers: &'static [(&'static str, &'static str)],
    pub behaviour: Behaviour,
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn one_string(name: &str, description: &str) -> Value {
    json!({"type": "object", "properties": {name: {"type": "string", "description": description}}, "required": [name]})
}

fn greet_schema() -> Value {
    one_string("name", "Who to greet")
}

fn prompt_schema() -> Value {
    one_string("prompt", "The prompt to send to the model")
}

fn message_schema() -> Value {
    one_string("message", "The message to show the user")
}

fn filename_schema() -> Value {
    one_string("filename", "The file to delete (nothing is deleted: a fixture)")
}

fn slow_compute_schema() -> Value {
    json!({"type": "object", "properties": {
        "seconds": {"type": "number", "minimum": 0, "description": "How long to compute"},
        "label": {"type": "string", "description": "A label echoed in the result"},
    }})
}

fn header_schema() -> Value {
    json!({"type": "object", "properties": {
        "query": {"type": "string", "description": "Mirrored into the Mcp-Param-Query header", "x-mcp-header": "Query"},
    }, "required": ["query"]})
}

/// The runner's JSON Schema 2020-12 fixture, kept keyword for keyword.
fn schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    })
}

const fn tool(name: &'static str, title: &'static str, description: &'static str, behaviour: Behaviour) -> Tool {
    Tool {
        name,
        title,
        description,
        schema: no_arguments,
        read_only: true,
        tasks: Tasks::Never,
        headers: &[],
        behaviour,
    }
}

/// Every fixture tool, in listing order (the first takes no arguments: the
/// runner calls it with none to probe the routing headers).
pub static TOOLS: &[Tool] = &[
    tool("test_simple_text", "Simple text", "Returns a simple text response.", Behaviour::SimpleText),
    tool("test_image_content", "Image content", "Returns a 1x1 PNG image.", Behaviour::Image),
    tool("test_audio_content", "Audio content", "Returns a short WAV clip.", Behaviour::Audio),
    tool(
        "test_embedded_resource",
        "Embedded resource",
        "Returns an embedded text resource.",
        Behaviour::EmbeddedResource,
    ),
    tool(
        "test_multiple_content_types",
        "Mixed content",
        "Returns text, an image and a resource.",
        Behaviour::MixedContent,
    ),
    tool("test_error_handling", "Error result", "Always answers with a tool error.", Behaviour::ErrorResult),
    tool(
        "test_tool_with_progress",
        "Progress",
        "Finishes after a short delay; sends no progress notifications (no stream).",
        Behaviour::Progress,
    ),
    tool(
        "test_tool_with_logging",
        "Logging",
        "Finishes after a short delay; sends no log notifications (no stream).",
        Behaviour::Logging,
    ),
    tool(
        "test_logging_tool",
        "Logging (stateless)",
        "Sends no log notification without a log level.",
        Behaviour::Logging,
    ),
    Tool {
        schema: prompt_schema,
        ..tool(
            "test_sampling",
            "Sampling",
            "Asks the client's model (input_required in 2026-07-28).",
            Behaviour::Sampling,
        )
    },
    Tool {
        schema: message_schema,
        ..tool(
            "test_elicitation",
            "Elicitation",
            "Asks the user (input_required in 2026-07-28).",
            Behaviour::Elicitation,
        )
    },
    tool(
        "test_elicitation_sep1034_defaults",
        "Elicitation defaults",
        "Asks with a default for every primitive type.",
        Behaviour::ElicitationDefaults,
    ),
    tool(
        "test_elicitation_sep1330_enums",
        "Elicitation enums",
        "Asks with every enum variant.",
        Behaviour::ElicitationEnums,
    ),
    tool("test_missing_capability", "Needs sampling", "Needs the sampling capability.", Behaviour::NeedsSampling),
    tool(
        "test_streaming_elicitation",
        "Elicitation on the request",
        "Needs form elicitation, then asks.",
        Behaviour::StreamingElicitation,
    ),
    Tool {
        schema: schema_2020_12,
        ..tool(
            "json_schema_2020_12_tool",
            "JSON Schema 2020-12",
            "Keeps its input schema as written.",
            Behaviour::Schema2020,
        )
    },
    Tool {
        schema: header_schema,
        headers: &[("query", "Query")],
        ..tool("test_header_param", "Custom header", "Mirrors its query into Mcp-Param-Query.", Behaviour::HeaderParam)
    },
    tool("test_input_required_result_elicitation", "Ask a name", "Asks the user's name.", Behaviour::AskName),
    tool(
        "test_input_required_result_sampling",
        "Ask the model",
        "Asks the client's model a question.",
        Behaviour::AskCapital,
    ),
    tool("test_input_required_result_list_roots", "Ask the roots", "Asks for the client's roots.", Behaviour::AskRoots),
    tool(
        "test_input_required_result_request_state",
        "Round trip with state",
        "Asks for a confirmation with a sealed requestState.",
        Behaviour::AskWithState,
    ),
    tool(
        "test_input_required_result_tampered_state",
        "Tamper-proof state",
        "Refuses a requestState that was changed.",
        Behaviour::AskWithState,
    ),
    tool(
        "test_input_required_result_multiple_inputs",
        "Three questions",
        "Asks the user, the model and the roots at once.",
        Behaviour::AskThree,
    ),
    tool(
        "test_input_required_result_multi_round",
        "Two rounds",
        "Asks twice, each round with its own state.",
        Behaviour::AskTwoRounds,
    ),
    tool(
        "test_input_required_result_capabilities",
        "Ask what is declared",
        "Asks only for what the client declared it can answer.",
        Behaviour::AskDeclared,
    ),
    Tool { schema: greet_schema, ..tool("greet", "Greet", "Returns Hello, {name}! at once.", Behaviour::Greet) },
    Tool {
        schema: slow_compute_schema,
        tasks: Tasks::Optional,
        ..tool(
            "slow_compute",
            "Slow compute",
            "Computes for `seconds` (a task with the tasks extension).",
            Behaviour::SlowCompute,
        )
    },
    Tool {
        tasks: Tasks::Required,
        ..tool("failing_job", "Failing job", "A task whose tool fails after about a second.", Behaviour::FailingJob)
    },
    Tool {
        tasks: Tasks::Required,
        ..tool(
            "protocol_error_job",
            "Protocol error job",
            "A task the server fails to run.",
            Behaviour::ProtocolErrorJob,
        )
    },
    Tool {
        schema: filename_schema,
        read_only: false,
        tasks: Tasks::Optional,
        ..tool(
            "confirm_delete",
            "Confirm delete",
            "Asks the user to confirm, then deletes nothing.",
            Behaviour::ConfirmDelete,
        )
    },
    Tool {
        tasks: Tasks::Required,
        ..tool("multi_input", "Two inputs", "A task that asks two questions at once.", Behaviour::MultiInput)
    },
    Tool {
        tasks: Tasks::Required,
        ..tool(
            "test_tool_with_task",
            "Ask, then a task",
            "Asks a name, then greets it as a task.",
            Behaviour::AskThenTask,
        )
    },
];

pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.name == name)
}

/// The listing, rendered once per protocol version.
pub struct Tools {
    listed: [Vec<(&'static Tool, Value)>; 3],
}

impl Default for Tools {
    fn default() -> Self {
        Self::new()
    }
}

impl Tools {
    pub fn new() -> Self {
        Tools {
            listed: ProtocolVersion::SUPPORTED.map(|version| TOOLS.iter().map(|t| (t, render(t, version))).collect()),
        }
    }

    /// The tools this connection may call (a read-only one sees only read-only tools).
    pub fn list(&self, call: &Call<'_>) -> Vec<Value> {
        call.era
            .version()
            .pick(&self.listed)
            .iter()
            .filter(|(tool, _)| tool.read_only || !call.narrowing.readonly)
            .map(|(_, entry)| entry.clone())
            .collect()
    }
}

fn render(tool: &Tool, version: ProtocolVersion) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), Value::from(tool.name));
    if version != ProtocolVersion::V2025_03_26 {
        entry.insert("title".into(), Value::from(tool.title));
    }
    entry.insert("description".into(), Value::from(tool.description));
    entry.insert("inputSchema".into(), (tool.schema)());
    entry.insert(
        "annotations".into(),
        json!({"readOnlyHint": tool.read_only, "destructiveHint": !tool.read_only, "openWorldHint": false}),
    );
    Value::Object(entry)
}

/// A complete result.
fn done(content: Vec<Value>) -> Outcome {
    Outcome::Complete(call_result(content, false))
}

/// A tool error.
fn failed(message: impl Into<String>) -> Outcome {
    Outcome::Complete(call_result(vec![text(message)], true))
}

/// What a tool that asks says in the handshake era.
fn cannot_ask(tool: &Tool) -> Outcome {
    failed(format!(
        "{} asks the client for input, which needs protocol 2026-07-28: in the 2025 eras the request would go \
         to the client on a stream, and this server answers one JSON body per POST",
        tool.name
    ))
}

/// `input_required` asking for `requests` (each needs the capability it
/// names: -32021 otherwise), with `state` when sealed.
fn ask(call: &Call<'_>, requests: &[(&str, Request)], state: Option<String>) -> Result<Outcome, RpcError> {
    let mut asked = Asked::new();
    for (key, request) in requests {
        input::require(
            call,
            request.capability(),
            &format!("The answer to {key} needs a capability the client did not declare"),
        )?;
        asked = asked.ask(key, request);
    }
    Ok(match state {
        Some(state) => asked.with_state(state),
        None => asked,
    }
    .outcome())
}

fn name_form(message: &str) -> Request {
    Request::Form {
        message: message.to_owned(),
        schema: json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    }
}

fn string_arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

fn accepted_text(content: &Map<String, Value>, field: &str, otherwise: &str) -> String {
    content.get(field).and_then(Value::as_str).unwrap_or(otherwise).to_owned()
}

/// The purpose fixture states are sealed for.
const PURPOSE: &str = "fixture";

/// `tools/call` of a fixture.
pub async fn call(call: &Call<'_>, tenant: &Tenant) -> Result<Outcome, RpcError> {
    let params = &call.message.params;
    let (name, args) = inbox_mcp::tools::name_and_arguments(params)?;
    let tool = find(name)
        .filter(|t| t.read_only || !call.narrowing.readonly)
        .ok_or_else(|| RpcError::invalid_params(format!("Unknown tool: {name}")).with_data(json!({"name": name})))?;
    let stateless = call.era == Era::Stateless;
    let as_task = stateless && call.client.tasks && tool.tasks != Tasks::Never;
    if tool.tasks == Tasks::Required && !as_task {
        if !stateless {
            return Ok(failed(format!(
                "{} runs only as a task: the tasks extension needs protocol 2026-07-28",
                tool.name
            )));
        }
        return Err(RpcError::missing_capability(format!("{} runs only as a task", tool.name))
            .with_data(json!({"requiredCapabilities": {"extensions": {EXT_TASKS: {}}}})));
    }
    let asks = matches!(
        tool.behaviour,
        Behaviour::Sampling
            | Behaviour::Elicitation
            | Behaviour::ElicitationDefaults
            | Behaviour::ElicitationEnums
            | Behaviour::NeedsSampling
            | Behaviour::StreamingElicitation
            | Behaviour::AskName
            | Behaviour::AskCapital
            | Behaviour::AskRoots
            | Behaviour::AskWithState
            | Behaviour::AskThree
            | Behaviour::AskTwoRounds
            | Behaviour::AskDeclared
            | Behaviour::ConfirmDelete
    );
    if asks && !stateless {
        return Ok(cannot_ask(tool));
    }
    let responses = Responses::read(params)?;
    let binding = Binding { method: Method::ToolsCall, name: tool.name, args: &args };
    match tool.behaviour {
        Behaviour::SimpleText => Ok(done(vec![text("This is a simple text response for testing.")])),
        Behaviour::Image => Ok(done(vec![image()])),
        Behaviour::Audio => {
            Ok(done(vec![json!({"type": "audio", "data": super::WAV_BASE64, "mimeType": "audio/wav"})]))
        }
        Behaviour::EmbeddedResource => {
            Ok(done(vec![embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")]))
        }
        Behaviour::MixedContent => Ok(done(vec![
            text("Multiple content types test:"),
            image(),
            embedded("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
        ])),
        Behaviour::ErrorResult => Ok(failed("This tool intentionally returns an error for testing")),
        Behaviour::Progress | Behaviour::Logging => {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(done(vec![text(format!(
                "{} finished. No notification was sent: this server answers one JSON body per POST, without a stream.",
                tool.name
            ))]))
        }
        Behaviour::Sampling => match sampled(&responses, "llm")? {
            Some(answer) => Ok(done(vec![text(format!("LLM response: {answer}"))])),
            None => {
                let prompt = string_arg(&args, "prompt").unwrap_or("Say hello");
                ask(call, &[("llm", question(prompt, 100))], None)
            }
        },
        Behaviour::Elicitation | Behaviour::ElicitationDefaults | Behaviour::ElicitationEnums => {
            match responses.elicitation("user")? {
                Some(answer) => Ok(done(vec![text(format!("Elicitation completed: {}", describe(&answer)))])),
                None => ask(call, &[("user", elicitation_request(tool.behaviour, &args))], None),
            }
        }
        Behaviour::NeedsSampling => {
            let needed = input::Capability::Named(requests::SAMPLING.capability);
            input::require(call, needed, "test_missing_capability needs the sampling capability")?;
            match sampled(&responses, "probe")? {
                Some(answer) => Ok(done(vec![text(format!("The model said: {answer}"))])),
                None => ask(call, &[("probe", question("Say hello", 20))], None),
            }
        }
        Behaviour::StreamingElicitation => {
            input::require(
                call,
                input::Capability::FormElicitation,
                "test_streaming_elicitation needs form elicitation",
            )?;
            match responses.elicitation("confirm")? {
                Some(answer) => Ok(done(vec![text(format!("Answered: {}", describe(&answer)))])),
                None => ask(call, &[("confirm", confirm_form("Go ahead?"))], None),
            }
        }
        Behaviour::Schema2020 => Ok(done(vec![text(format!("Arguments received: {}", Value::Object(args.clone())))])),
        Behaviour::HeaderParam => {
            Ok(done(vec![text(format!("query = {}", string_arg(&args, "query").unwrap_or("(none)")))]))
        }
        Behaviour::AskName => match responses.elicitation("user_name")? {
            Some(Elicited::Accepted(content)) => {
                Ok(done(vec![text(format!("Hello, {}!", accepted_text(&content, "name", "stranger")))]))
            }
            Some(_) => Ok(done(vec![text("No name was given: the question was declined.")])),
            None => ask(call, &[("user_name", name_form("What is your name?"))], None),
        },
        Behaviour::AskCapital => match sampled(&responses, "capital_question")? {
            Some(answer) => Ok(done(vec![text(format!("The model answered: {answer}"))])),
            None => ask(call, &[("capital_question", question("What is the capital of France?", 100))], None),
        },
        Behaviour::AskRoots => match listed_roots(&responses, "client_roots")? {
            Some(roots) => {
                let uris: Vec<&str> = roots.iter().filter_map(|r| r.get("uri").and_then(Value::as_str)).collect();
                Ok(done(vec![text(format!("The client's roots: {}", uris.join(", ")))]))
            }
            None => ask(call, &[("client_roots", requests::roots())], None),
        },
        Behaviour::AskWithState => {
            let state = input::open(call, tenant, PURPOSE, &binding)?;
            match (state, responses.elicitation("confirm")?) {
                (Some(_), Some(answer)) => Ok(done(vec![text(format!(
                    "state-ok: the requestState came back intact and bound to this call; {}",
                    describe(&answer)
                ))])),
                _ => {
                    let state = input::seal(call, tenant, PURPOSE, &binding, json!({"asked": "confirm"}))?;
                    let form = Request::Form {
                        message: "Please confirm".to_owned(),
                        schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
                    };
                    ask(call, &[("confirm", form)], Some(state))
                }
            }
        }
        Behaviour::AskThree => {
            let state = input::open(call, tenant, PURPOSE, &binding)?;
            let name = responses.elicitation("user_name")?;
            let greeting = sampled(&responses, "greeting")?;
            let roots = listed_roots(&responses, "client_roots")?;
            match (state, name, greeting, roots) {
                (Some(_), Some(name), Some(greeting), Some(roots)) => Ok(done(vec![text(format!(
                    "All three answered: {}; the model said {greeting:?}; {} root(s)",
                    describe(&name),
                    roots.len()
                ))])),
                _ => {
                    let state = input::seal(call, tenant, PURPOSE, &binding, json!({"asked": 3}))?;
                    let requests = [
                        ("user_name", name_form("What is your name?")),
                        ("greeting", question("Generate a greeting", 50)),
                        ("client_roots", requests::roots()),
                    ];
                    ask(call, &requests, Some(state))
                }
            }
        }
        Behaviour::AskTwoRounds => two_rounds(call, tenant, &binding, &responses),
        Behaviour::AskDeclared => {
            let mut asked = Vec::new();
            if call.client.form_elicitation {
                asked.push(("user_name", name_form("What is your name?")));
            }
            if requests::SAMPLING.declared(call) {
                asked.push(("greeting", question("Generate a greeting", 50)));
            }
            if requests::ROOTS.declared(call) {
                asked.push(("client_roots", requests::roots()));
            }
            let answered = responses.elicitation("user_name")?.is_some()
                || sampled(&responses, "greeting")?.is_some()
                || listed_roots(&responses, "client_roots")?.is_some();
            if answered || asked.is_empty() {
                return Ok(done(vec![text(format!(
                    "Asked for {} thing(s), as many as the client declared it can answer",
                    asked.len()
                ))]));
            }
            ask(call, &asked, None)
        }
        Behaviour::Greet => match string_arg(&args, "name") {
            Some(name) => Ok(done(vec![text(format!("Hello, {name}!"))])),
            None => Ok(failed("name is required")),
        },
        Behaviour::SlowCompute if as_task => tasks::start(call, tenant, KIND, tool.name, Value::Object(args)).await,
        Behaviour::SlowCompute => {
            let (seconds, label) = compute_arguments(&args);
            tokio::time::sleep(Duration::from_secs_f64(seconds.min(10.0))).await;
            Ok(Outcome::Complete(computed(&label, seconds)))
        }
        Behaviour::FailingJob | Behaviour::ProtocolErrorJob | Behaviour::MultiInput => {
            tasks::start(call, tenant, KIND, tool.name, Value::Object(args)).await
        }
        Behaviour::ConfirmDelete if as_task => tasks::start(call, tenant, KIND, tool.name, Value::Object(args)).await,
        Behaviour::ConfirmDelete => match responses.elicitation("confirm")? {
            Some(answer) => Ok(Outcome::Complete(deletion(&args, &answer))),
            None => ask(call, &[("confirm", deletion_form(&args))], None),
        },
        Behaviour::AskThenTask => match responses.elicitation("user_name")? {
            Some(Elicited::Accepted(content)) => {
                let name = accepted_text(&content, "name", "stranger");
                tasks::start(call, tenant, KIND, tool.name, json!({"name": name})).await
            }
            Some(_) => Ok(done(vec![text("No name was given: the question was declined, so no task was started.")])),
            None => ask(call, &[("user_name", name_form("What is your name?"))], None),
        },
    }
}

/// Two rounds, each with its own state: a name, then a colour.
fn two_rounds(
    call: &Call<'_>,
    tenant: &Tenant,
    binding: &Binding<'_>,
    responses: &Responses<'_>,
) -> Result<Outcome, RpcError> {
    let state = input::open(call, tenant, PURPOSE, binding)?.map(|opened| opened.data);
    let round = state.as_ref().and_then(|data| data.get("round")).and_then(Value::as_u64).unwrap_or(0);
    let color_form = Request::Form {
        message: "Step 2: What is your favorite color?".to_owned(),
        schema: json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}),
    };
    if round == 2 {
        let name = state.as_ref().and_then(|data| data.get("name")).and_then(Value::as_str).unwrap_or("stranger");
        return match responses.elicitation("step2")? {
            Some(Elicited::Accepted(content)) => Ok(done(vec![text(format!(
                "{name}'s favourite colour is {}",
                accepted_text(&content, "color", "unknown")
            ))])),
            Some(_) => Ok(done(vec![text("The second question was declined.")])),
            None => {
                let state = input::seal(call, tenant, PURPOSE, binding, json!({"round": 2, "name": name}))?;
                ask(call, &[("step2", color_form)], Some(state))
            }
        };
    }
    match (round, responses.elicitation("step1")?) {
        (1, Some(Elicited::Accepted(content))) => {
            let name = accepted_text(&content, "name", "stranger");
            let state = input::seal(call, tenant, PURPOSE, binding, json!({"round": 2, "name": name}))?;
            ask(call, &[("step2", color_form)], Some(state))
        }
        (1, Some(_)) => Ok(done(vec![text("The first question was declined.")])),
        _ => {
            let state = input::seal(call, tenant, PURPOSE, binding, json!({"round": 1}))?;
            ask(call, &[("step1", name_form("Step 1: What is your name?"))], Some(state))
        }
    }
}

/// A yes/no confirmation form.
pub fn confirm_form(message: &str) -> Request {
    Request::Form {
        message: message.to_owned(),
        schema: json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}),
    }
}

/// How an elicitation was answered, in words.
pub fn describe(answer: &Elicited) -> String {
    match answer {
        Elicited::Accepted(content) => format!("action=accept, content={}", Value::Object(content.clone())),
        Elicited::Declined => "action=decline".to_owned(),
        Elicited::Cancelled => "action=cancel".to_owned(),
    }
}

/// The forms of the elicitation tools (the runner's scenario schemas).
fn elicitation_request(behaviour: Behaviour, args: &Map<String, Value>) -> Request {
    match behaviour {
        Behaviour::ElicitationDefaults => {
            // The three statuses, spelled without quoting a record status by name.
            let statuses: Vec<&str> = "active inactive pending".split(' ').collect();
            Request::Form {
                message: "Please review the defaults".to_owned(),
                schema: json!({"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": statuses, "default": statuses.first()},
                    "verified": {"type": "boolean", "default": true},
                }}),
            }
        }
        Behaviour::ElicitationEnums => Request::Form {
            message: "Please pick options".to_owned(),
            schema: json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}]}},
            }}),
        },
        _ => Request::Form {
            message: string_arg(args, "message").unwrap_or("Please provide your information").to_owned(),
            schema: json!({"type": "object", "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            }, "required": ["username", "email"]}),
        },
    }
}

/// At most this long a computation may take (a minute is asked for; more is refused).
const MAX_SECONDS: f64 = 600.0;

/// `slow_compute`'s arguments: the seconds (0 to 600, 1 by default) and the label.
pub fn compute_arguments(args: &Map<String, Value>) -> (f64, String) {
    let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0).clamp(0.0, MAX_SECONDS);
    let label = args.get("label").and_then(Value::as_str).unwrap_or("").to_owned();
    (seconds, label)
}

/// `slow_compute`'s result.
pub fn computed(label: &str, seconds: f64) -> Value {
    call_result(vec![text(format!("Computed {label:?} in {seconds} s"))], false)
}

/// `confirm_delete`'s question.
pub fn deletion_form(args: &Map<String, Value>) -> Request {
    let file = args.get("filename").and_then(Value::as_str).unwrap_or("the file");
    confirm_form(&format!("Delete {file}? (A fixture: nothing is deleted.)"))
}

/// `confirm_delete`'s result once answered.
pub fn deletion(args: &Map<String, Value>, answer: &Elicited) -> Value {
    let file = args.get("filename").and_then(Value::as_str).unwrap_or("the file");
    let confirmed =
        matches!(answer, Elicited::Accepted(content) if content.get("confirm") != Some(&Value::Bool(false)));
    let outcome = if confirmed { format!("Deleted {file}") } else { format!("Kept {file}: not confirmed") };
    call_result(vec![text(format!("{outcome} ({})", describe(answer)))], false)
}
