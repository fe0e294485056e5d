//! What an operation of the API is: one `Operation` declaration, written in
//! the module of the records it is about, beside its handler. A declaration
//! holds everything the rest of the server derives from it: the route
//! (method and path), who may call it (`Needs`), its input (path parameters,
//! list filters, the JSON body's schema), its success answers, whether it
//! enqueues a job, the MCP tool that mirrors it (`Tool`, absent for
//! operations no agent calls) and the handler itself. The route table
//! (`super::route`), the OpenAPI document (`super::openapi`), the
//! schemas (`super::schemas`), the audit wiring (`super::audit`) and the MCP
//! catalogue (`inbox_mcp::catalogue`) read the declarations, so adding an
//! operation is one declaration and its handler, in one file, listed in that
//! module's `OPERATIONS`.
//!
//! `Input` is the call as the handler reads it, from either surface: the
//! path parameters, and the rest of the arguments either as REST received
//! them (query string, JSON body) or as an MCP tool's arguments object. The
//! handler asks for what it takes (`params`, `body`) and gets the same
//! typed values and the same errors from both, without arguments being
//! written into a query string or body bytes and parsed again.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use http::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::error::ApiError;
use super::route::{Param, Route, Template};
use super::schemas::Shape;
use super::shape::Body;
use super::{ApiResponse, Ctx, Needs, input};

/// An operation: a reference to its declaration (they are `static`s, one per
/// operation, so a reference is as cheap as an enum and compares by name).
pub type Op = &'static Operation;

/// The future a handler answers with.
pub type Answer<'a> = Pin<Box<dyn Future<Output = Result<ApiResponse, ApiError>> + Send + 'a>>;

/// A handler: the operation's code, for a caller already authorized by the
/// declaration's `needs`.
pub type Handler = for<'a> fn(&'a Ctx<'a>, &'a Input<'a>) -> Answer<'a>;

/// The extra check a replayed answer needs when the handler, not the route,
/// authorizes the call (`Needs::Job`): the same check the handler makes.
pub type ReplayCheck =
    for<'a> fn(&'a Ctx<'a>, &'a str) -> Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send + 'a>>;

/// A list's filters besides `limit` and `cursor` (`PAGING`): their names,
/// which the query string may hold (`Input::params`), and their schemas, in
/// the same order. Written with `filters!`, one name beside one schema.
#[derive(Clone, Copy)]
pub struct Filters {
    pub names: &'static [&'static str],
    pub schemas: fn() -> Vec<Value>,
}

/// The parameters every list takes.
pub const PAGING: [&str; 2] = ["limit", "cursor"];

/// `list: Some(filters!("status" => one_of(..), "q" => ...))`: a list's
/// filters, each name written once beside its schema.
#[macro_export]
macro_rules! filters {
    ($($name:literal => $schema:expr),* $(,)?) => {
        $crate::operation::Filters { names: &[$($name),*], schemas: || vec![$($schema),*] }
    };
}
pub use crate::filters;

impl Filters {
    /// Each filter's name and schema.
    pub fn params(&self) -> impl Iterator<Item = (&'static str, Value)> {
        self.names.iter().copied().zip((self.schemas)())
    }
}

/// The HTTP methods of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Put,
    Patch,
    Post,
    Delete,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Post => "POST",
            Verb::Delete => "DELETE",
        }
    }

    /// Arguments of a tool whose operation is called with this method go to
    /// the query (GET, DELETE) or the body (the others).
    pub fn args_are_query(self) -> bool {
        matches!(self, Verb::Get | Verb::Delete)
    }
}

/// One operation, declared once.
pub struct Operation {
    /// Snake case (`webhook_rotate_secret`): the OpenAPI `operationId`, the
    /// audit record's `operation` and the metric dimension.
    pub name: &'static str,
    /// One line for the OpenAPI document.
    pub summary: &'static str,
    pub method: Verb,
    /// The path after `/api/v1` (`/inboxes/{id}/senders/{sender}`), parsed
    /// into its parameters where the operation is declared.
    pub template: Template,
    pub needs: Needs,
    /// What the path's `{id}` names (`e-mail`), for its description.
    pub id_of: &'static str,
    /// A paginated list: the filters it takes besides `limit` and `cursor`.
    /// Only lists read the query string.
    pub list: Option<Filters>,
    /// It also takes a raw e-mail message (`Content-Type: message/rfc822`)
    /// as its body (`Input::message`).
    pub accepts_message: bool,
    /// The JSON body it takes, if any: the type its handler parses
    /// (`Body::of::<T>()`), which gives the published schema and its check.
    pub body: Option<&'static Body>,
    /// Its success answers: status and shape.
    pub answers: &'static [(StatusCode, Shape)],
    /// Answers 202 with a job that finishes later (what MCP turns into tasks).
    pub enqueues: bool,
    /// A write that may succeed with nothing to do (an allowed sender added
    /// again, a job cancelled again): its audit record is written after the
    /// fact instead of with a change.
    pub may_change_nothing: bool,
    /// For a write its handler authorizes: the check a replay repeats.
    pub replay_check: Option<ReplayCheck>,
    /// The MCP tool that mirrors it.
    pub tool: Option<Tool>,
    pub run: Handler,
}

/// The declaration's fields that every operation has; the rest (its
/// `summary` first) are set with struct update syntax. Evaluated in the
/// operations' statics, so a malformed `template` fails the build
/// (`Template::new`).
pub const fn operation(
    name: &'static str,
    method: Verb,
    template: &'static str,
    needs: Needs,
    run: Handler,
) -> Operation {
    Operation {
        name,
        summary: "",
        method,
        template: Template::new(template),
        needs,
        id_of: "",
        list: None,
        body: None,
        accepts_message: false,
        answers: &[],
        enqueues: false,
        may_change_nothing: false,
        replay_check: None,
        tool: None,
        run,
    }
}

/// A list without filters (`limit` and `cursor` only).
pub const NO_FILTERS: Filters = Filters { names: &[], schemas: Vec::new };

impl Operation {
    /// Whether the operation changes state (and so honours `Idempotency-Key`
    /// and leaves an audit record).
    pub fn is_write(&self) -> bool {
        self.method != Verb::Get
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn enqueues(&self) -> bool {
        self.enqueues
    }

    pub fn takes_query(&self) -> bool {
        self.list.is_some()
    }

    pub fn takes_body(&self) -> bool {
        self.body.is_some()
    }
}

impl PartialEq for Operation {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Operation {}

impl fmt::Debug for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The MCP tool that mirrors an operation: what the catalogue lists. Its
/// input and output schemas are the operation's.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    /// For the agent: what it does and when to use it.
    pub description: &'static str,
    pub destructive: bool,
    pub idempotent: bool,
    /// What confirming it does, in one sentence (destructive tools).
    pub effect: &'static str,
    /// For a destructive tool: the arguments whose presence makes a call
    /// need the user's confirmation; empty: every call needs it.
    pub confirm_when: &'static [&'static str],
}

impl Tool {
    /// A tool that changes nothing.
    pub const fn read(name: &'static str, title: &'static str, description: &'static str) -> Tool {
        Tool { name, title, description, destructive: false, idempotent: true, effect: "", confirm_when: &[] }
    }

    /// A tool the user confirms before it runs; `effect` says what confirming does.
    pub const fn destructive(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        effect: &'static str,
    ) -> Tool {
        Tool { name, title, description, destructive: true, idempotent: true, effect, confirm_when: &[] }
    }
}

/// The arguments of a call besides its path parameters.
#[derive(Debug, Clone, Copy)]
pub enum Args<'a> {
    /// As REST received them.
    Rest { query: Option<&'a str>, body: &'a [u8], media: Media },
    /// An MCP tool's arguments without the path parameters, already checked
    /// against the tool's input schema: the query of a GET or DELETE, the
    /// body of the other methods.
    Tool(&'a Map<String, Value>),
}

/// What a REST body is (the edge admits the second only where the
/// operation `accepts_message`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Media {
    #[default]
    Json,
    /// A raw e-mail message (`message/rfc822`).
    Message,
}

/// One call as its handler reads it.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub route: &'a Route,
    pub args: Args<'a>,
}

impl<'a> Input<'a> {
    pub fn rest(route: &'a Route, query: Option<&'a str>, body: &'a [u8]) -> Input<'a> {
        Input::rest_as(route, query, body, Media::Json)
    }

    /// A REST call whose body is `media`.
    pub fn rest_as(route: &'a Route, query: Option<&'a str>, body: &'a [u8], media: Media) -> Input<'a> {
        Input { route, args: Args::Rest { query, body, media } }
    }

    /// The raw e-mail message the body is, when it is one.
    pub fn message(&self) -> Option<&'a [u8]> {
        match self.args {
            Args::Rest { body, media: Media::Message, .. } => Some(body),
            Args::Rest { .. } | Args::Tool(_) => None,
        }
    }

    pub fn tool(route: &'a Route, args: &'a Map<String, Value>) -> Input<'a> {
        Input { route, args: Args::Tool(args) }
    }

    /// No arguments besides the path.
    pub fn bare(route: &'a Route) -> Input<'a> {
        Input::rest(route, None, b"")
    }

    /// The path's `{id}`, as given (never parsed as a path).
    pub fn id(&self) -> &'a str {
        self.route.param(Param::Id)
    }

    /// The path's `{sender}` (an allowed sender), as given.
    pub fn sender(&self) -> &'a str {
        self.route.param(Param::Sender)
    }

    /// The path's `{n}` (an attachment's position), as given.
    pub fn attachment(&self) -> &'a str {
        self.route.param(Param::Attachment)
    }

    /// The path's `{sub}` (a token subject), as given.
    pub fn sub(&self) -> &'a str {
        self.route.param(Param::Sub)
    }

    /// A tool's arguments, when they are the query (GET and DELETE).
    fn tool_query(&self) -> Option<&'a Map<String, Value>> {
        match self.args {
            Args::Tool(args) if self.route.op().method.args_are_query() => Some(args),
            Args::Tool(_) | Args::Rest { .. } => None,
        }
    }

    /// A tool's arguments, when they are the body (the other methods).
    fn tool_body(&self) -> Option<&'a Map<String, Value>> {
        match self.args {
            Args::Tool(args) if !self.route.op().method.args_are_query() => Some(args),
            Args::Tool(_) | Args::Rest { .. } => None,
        }
    }

    /// The query parameters, each at most once and only those the
    /// operation declares (a list's `PAGING` and filters; none for the
    /// others): 400 otherwise, naming the parameter. A tool's arguments are
    /// the same parameters, their values as text.
    pub fn params(&self) -> Result<BTreeMap<String, String>, ApiError> {
        let filters = self.route.op().list.map(|f| f.names);
        let allowed = |name: &str| filters.is_some_and(|f| PAGING.contains(&name) || f.contains(&name));
        let refuse = |name: &str| {
            let names: Vec<&str> = filters.map(|f| PAGING.iter().chain(f).copied().collect()).unwrap_or_default();
            input::unknown_parameter(name, &names)
        };
        match self.args {
            Args::Rest { query, .. } => input::query(query, allowed, refuse),
            Args::Tool(_) => {
                let mut params = BTreeMap::new();
                for (name, value) in self.tool_query().into_iter().flatten() {
                    if !allowed(name) {
                        return Err(refuse(name));
                    }
                    params.insert(name.clone(), value.as_str().map_or_else(|| value.to_string(), str::to_owned));
                }
                Ok(params)
            }
        }
    }

    /// The JSON body as `T` (declared with `deny_unknown_fields`): 400
    /// naming the field that does not fit.
    pub fn body<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        let declared = self.route.op().body;
        debug_assert_eq!(
            declared.map(|b| (b.type_name)()),
            Some(std::any::type_name::<T>()),
            "{} parses another body than it declares",
            self.route.op().name
        );
        match self.args {
            Args::Rest { body, .. } => {
                let value = input::json_body(body)?;
                if let Some(declared) = declared {
                    declared.check(&value)?;
                }
                input::from_value(value)
            }
            Args::Tool(_) => {
                let args = self.tool_body().cloned().unwrap_or_default();
                input::from_value(Value::Object(args))
            }
        }
    }

    /// Refuses a body where the operation takes none (a stray body is a
    /// client bug worth telling).
    pub fn no_body(&self) -> Result<(), ApiError> {
        let stray = match self.args {
            Args::Rest { body, .. } => !(body.iter().all(u8::is_ascii_whitespace) || body == b"{}"),
            Args::Tool(_) => self.tool_body().is_some_and(|args| !args.is_empty()),
        };
        if stray { Err(ApiError::bad_request("invalid_body", "This route takes no body", json!({}))) } else { Ok(()) }
    }

    /// The body as JSON for the audit digest: `{}` when absent; text that is
    /// not JSON as a string (refused before anything is recorded, but the
    /// digest stays defined).
    pub fn body_value(&self) -> Value {
        match self.args {
            Args::Rest { body, .. } if body.iter().all(u8::is_ascii_whitespace) => json!({}),
            Args::Rest { body, .. } => std::str::from_utf8(body)
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .unwrap_or_else(|| Value::from(String::from_utf8_lossy(body))),
            Args::Tool(_) => Value::Object(self.tool_body().cloned().unwrap_or_default()),
        }
    }
}
