//! Which endpoint a path is, and the path parameters it names.
//!
//! `Param` is a path parameter's name (`{id}`, `{sender}`, `{sub}`);
//! `Template` is an operation's path template parsed into its parameters,
//! once, where the operation is declared (`Template::new` is a `const fn`
//! evaluated in the declarations' statics, so a malformed template or an
//! unknown parameter fails the build). Everything that asks which
//! parameters a path has — the router, the OpenAPI document and the
//! schemas (`super::schemas::path_params`), the MCP tools' arguments — reads
//! the parsed template, never the template's text.
//!
//! `Route` is an operation with the values of its template's parameters,
//! kept by name: `Route::new(op).with(Param::Id, id)`, read back with
//! `param(Param::Sub)` (or `id()`). A value for a parameter the template
//! does not declare is refused (`with`, `param_mut`), so a `{sub}` is never
//! carried under another parameter's name.
//!
//! `Route::parse` is the one function that decides which endpoint a method
//! and a path are: one lookup in a `matchit::Router` built once per process
//! from `super::operations()`, whose value for each template is its
//! operations in declaration order. The semantics are those of the hand
//! matcher it replaced:
//!
//! - Leading `/`s are skipped; the rest is split on `/` and each segment is
//!   percent-decoded on its own, so an encoded `/` stays inside one
//!   parameter (and then fails that parameter's validation) instead of
//!   reaching another route, and an encoded letter in a static segment
//!   (`/inbox%65s`) still names it.
//! - A parameter matches any segment, the empty one included (`/inboxes/`
//!   is `GET /inboxes/{id}` with an empty id, which the handler answers
//!   with its 404); a trailing `/` is that empty segment, never a redirect.
//! - No template matches: 404 `NoRoute`; the path matches but not with this
//!   method: 405 `MethodNotAllowed`, `Allow` listing the template's methods
//!   in declaration order.
//!
//! matchit matches bytes as they are (no decoding) and leaves an empty
//! segment unmatched at the end of a path but matched in its middle, so it
//! is not handed the raw path: it looks up a key made of the decoded
//! segments (the path itself when nothing in it is encoded or empty, which
//! is every ordinary request: no allocation), with an empty segment or one
//! whose decoding holds a `/` written as `%` — a segment no static segment
//! equals (those are lowercase letters and `_`), so it matches a parameter
//! only, as its value would. The router says which template matched; the
//! values are then the decoded segments at the template's parameter
//! positions. matchit prefers a static segment to a parameter where two
//! templates could both match a path; no two declared templates overlap
//! (a test checks), so its priority never decides and the first matching
//! declaration wins, as before.

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use percent_encoding::percent_decode_str;

use super::error::ApiError;
use super::{Op, operations};

/// The most parameters a path template has.
const MAX_PARAMS: usize = 2;

/// A path parameter, by its name in the templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// `{id}`: the record the path is about (or the workspace of an
    /// organization's route).
    Id,
    /// `{sender}`: an allowed sender, an address or `@domain`.
    Sender,
    /// `{sub}`: a token subject, a person or a machine client.
    Sub,
    /// `{n}`: an attachment's position in its e-mail's list, from 0.
    Attachment,
}

impl Param {
    pub const ALL: [Param; 4] = [Param::Id, Param::Sender, Param::Sub, Param::Attachment];

    /// The name in a template's braces, and of the MCP tool argument that
    /// carries it.
    pub const fn name(self) -> &'static str {
        match self {
            Param::Id => "id",
            Param::Sender => "sender",
            Param::Sub => "sub",
            Param::Attachment => "n",
        }
    }

    /// The parameter called `name`, if any.
    pub fn named(name: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The parameter a template segment (`{id}`) names, if it is one.
    const fn in_braces(segment: &[u8]) -> Option<Param> {
        match segment {
            b"{id}" => Some(Param::Id),
            b"{sender}" => Some(Param::Sender),
            b"{sub}" => Some(Param::Sub),
            b"{n}" => Some(Param::Attachment),
            _ => None,
        }
    }

    /// `==`, usable where the template is parsed (at compile time).
    const fn is(self, other: Param) -> bool {
        self as u8 == other as u8
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A parameter of a template and the segment it is (counted after the
/// leading `/`: `/inboxes/{id}` has `{id}` at 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    param: Param,
    segment: usize,
}

/// An operation's path template (the path after `/api/v1`), parsed into
/// its parameters.
#[derive(Debug, Clone, Copy)]
pub struct Template {
    text: &'static str,
    /// The parameters in path order, from the first slot on.
    slots: [Option<Slot>; MAX_PARAMS],
}

impl Template {
    /// Parses `text`: a `/` then segments, each lowercase letters and `_`
    /// or a parameter in braces (`{id}`, `{sender}`, `{sub}`), at most
    /// `MAX_PARAMS` of them, none twice. Anything else panics, which in the
    /// operations' statics (where every template is parsed) is a build
    /// error, never a panic at run time.
    pub const fn new(text: &'static str) -> Template {
        let mut rest = match text.as_bytes() {
            [b'/', rest @ ..] => rest,
            _ => panic!("a path template starts with /"),
        };
        let mut slots: [Option<Slot>; MAX_PARAMS] = [None; MAX_PARAMS];
        let mut segment = 0;
        loop {
            let (part, after) = split_segment(rest);
            if let Some(param) = Param::in_braces(part) {
                let slot = Some(Slot { param, segment });
                // Two slots (`MAX_PARAMS`), filled in order.
                slots = match slots {
                    [None, None] => [slot, None],
                    [Some(first), None] if !first.param.is(param) => [Some(first), slot],
                    _ => panic!("a path template names at most two parameters, each once"),
                };
            } else if !is_static(part) {
                panic!("a path template's segment is lowercase letters and _, or {{id}}, {{sender}}, {{sub}} or {{n}}");
            }
            segment += 1;
            match after {
                Some(after) => rest = after,
                None => break,
            }
        }
        Template { text, slots }
    }

    /// The template as declared (`/inboxes/{id}/senders/{sender}`).
    pub const fn as_str(self) -> &'static str {
        self.text
    }

    /// Its parameters, in path order.
    pub fn params(self) -> impl Iterator<Item = Param> {
        self.slots.into_iter().flatten().map(|slot| slot.param)
    }

    /// Whether it has the parameter `param`.
    pub fn declares(self, param: Param) -> bool {
        self.position(param).is_some()
    }

    /// Where `param` is among its parameters (`Route::values`).
    fn position(self, param: Param) -> Option<usize> {
        self.slots.iter().position(|slot| slot.is_some_and(|slot| slot.param == param))
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text)
    }
}

/// The first segment of `bytes` and what follows its `/`, if one does.
const fn split_segment(bytes: &[u8]) -> (&[u8], Option<&[u8]>) {
    let mut rest = bytes;
    let mut at = 0;
    while let [byte, tail @ ..] = rest {
        if *byte == b'/' {
            return match bytes.split_at_checked(at) {
                Some((part, [_, after @ ..])) => (part, Some(after)),
                _ => (bytes, None),
            };
        }
        at += 1;
        rest = tail;
    }
    (bytes, None)
}

/// A static segment of a template: lowercase letters and `_`, not empty.
/// (What lets `lookup_key` stand in `%` for a segment no static one equals.)
const fn is_static(part: &[u8]) -> bool {
    if part.is_empty() {
        return false;
    }
    let mut rest = part;
    while let [byte, tail @ ..] = rest {
        if !(byte.is_ascii_lowercase() || *byte == b'_') {
            return false;
        }
        rest = tail;
    }
    true
}

/// An operation with the values of its path parameters: what the API runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    op: Op,
    /// The values of the template's parameters, in its order
    /// (`Template::params`); a slot it has no parameter for stays empty.
    values: [String; MAX_PARAMS],
}

impl Route {
    /// `op` with every parameter empty (the value of a route without any).
    pub fn new(op: Op) -> Route {
        Route { op, values: Default::default() }
    }

    /// The route with `value` for `param`: the template must declare it
    /// (a route built otherwise is a defect, never a client's doing: logged
    /// and answered as the server's 503).
    pub fn with(mut self, param: Param, value: impl Into<String>) -> Result<Route, ApiError> {
        let Some(slot) = self.param_mut(param) else {
            tracing::error!(op = self.op.name, %param, "a route built with a parameter its template does not declare");
            return Err(ApiError::Unavailable);
        };
        *slot = value.into();
        Ok(self)
    }

    pub fn op(&self) -> Op {
        self.op
    }

    /// The value of `param`, as given (never parsed as a path); empty when
    /// the template does not declare it.
    pub fn param(&self, param: Param) -> &str {
        self.op.template.position(param).and_then(|i| self.values.get(i)).map_or("", String::as_str)
    }

    /// The path's `{id}`.
    pub fn id(&self) -> &str {
        self.param(Param::Id)
    }

    /// Where the value of `param` is kept: none when the template does not
    /// declare it.
    pub fn param_mut(&mut self, param: Param) -> Option<&mut String> {
        self.op.template.position(param).and_then(|i| self.values.get_mut(i))
    }

    /// Each parameter of the template with its value, in path order.
    pub fn params(&self) -> impl Iterator<Item = (Param, &str)> {
        self.op.template.params().zip(self.values.iter().map(String::as_str))
    }

    /// Matches a method and a percent-encoded path (after `/api/v1`)
    /// against the operations: one lookup in the router (module docs).
    pub fn parse(method: &str, path: &str) -> Result<Route, ApiError> {
        let raw = path.trim_start_matches('/');
        let key = lookup_key(path, raw);
        let ops = ROUTER.at(&key).map_err(|_| ApiError::NoRoute)?.value;
        let Some(op) = ops.iter().copied().find(|op| op.method.as_str() == method) else {
            let allow: Vec<&str> = ops.iter().map(|op| op.method.as_str()).collect();
            return Err(if allow.is_empty() {
                ApiError::NoRoute
            } else {
                ApiError::MethodNotAllowed { allow: allow.join(", ") }
            });
        };
        let mut route = Route::new(op);
        for (slot, value) in op.template.slots.iter().flatten().zip(&mut route.values) {
            if let Some(segment) = raw.split('/').nth(slot.segment) {
                *value = decode(segment).into_owned();
            }
        }
        Ok(route)
    }
}

/// Every template's operations, in declaration order, by template: built on
/// the first `Route::parse` of the process.
static ROUTER: LazyLock<matchit::Router<Vec<Op>>> = LazyLock::new(|| {
    let mut templates: Vec<(&'static str, Vec<Op>)> = Vec::new();
    for op in operations() {
        match templates.iter_mut().find(|(template, _)| *template == op.template.as_str()) {
            Some((_, ops)) => ops.push(op),
            None => templates.push((op.template.as_str(), vec![op])),
        }
    }
    let mut router = matchit::Router::new();
    for (template, ops) in templates {
        // Never for the declared templates (a test parses a path of each
        // back to its operation); were it to happen, those routes would
        // answer 404 rather than the process panic.
        if let Err(error) = router.insert(template, ops) {
            tracing::error!(%error, template, "the router refuses a path template");
        }
    }
    router
});

/// What stands for a segment the router must see as a parameter's value
/// only: not empty, no `/`, equal to no static segment (`is_static`).
const ANY_VALUE: &str = "%";

/// The key the router looks up for `path` (`raw`: `path` without its
/// leading `/`s): `/` and each segment decoded, an empty one or one whose
/// decoding holds a `/` as `ANY_VALUE`. A path with nothing encoded and no
/// empty segment is its own key.
fn lookup_key<'p>(path: &'p str, raw: &'p str) -> Cow<'p, str> {
    // `raw` starts with no `/`: an empty segment is an empty `raw`, a `//`
    // or a trailing `/`.
    let plain = !raw.is_empty() && !raw.contains('%') && !raw.contains("//") && !raw.ends_with('/');
    if plain {
        // The path from its last leading `/` (none when it has none).
        if let Some(key) = path.len().checked_sub(raw.len() + 1).and_then(|start| path.get(start..)) {
            return Cow::Borrowed(key);
        }
    }
    let mut key = String::with_capacity(raw.len() + 1);
    for segment in raw.split('/') {
        key.push('/');
        let decoded = decode(segment);
        key.push_str(if decoded.is_empty() || decoded.contains('/') { ANY_VALUE } else { &decoded });
    }
    Cow::Owned(key)
}

/// A segment percent-decoded (text that is not UTF-8 with U+FFFD).
fn decode(segment: &str) -> Cow<'_, str> {
    percent_decode_str(segment).decode_utf8_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{emails, inboxes, org, senders, webhooks};

    /// The hand matcher `Route::parse` replaced, kept as the reference its
    /// answers are compared with: `(operation, id, the other parameter)`.
    fn reference(method: &str, path: &str) -> Result<(Op, String, String), Option<String>> {
        let segments: Vec<String> = path.trim_start_matches('/').split('/').map(|s| decode(s).into_owned()).collect();
        let mut allowed: Vec<&'static str> = Vec::new();
        for op in operations() {
            let parts: Vec<&str> = op.template.as_str().trim_start_matches('/').split('/').collect();
            if parts.len() != segments.len() {
                continue;
            }
            let (mut id, mut other) = (String::new(), String::new());
            let fits = parts.iter().zip(&segments).all(|(part, segment)| {
                match part.strip_prefix('{') {
                    Some("id}") => id.clone_from(segment),
                    Some(_) => other.clone_from(segment),
                    None => return part == segment,
                }
                true
            });
            if !fits {
                continue;
            }
            if op.method.as_str() == method {
                return Ok((op, id, other));
            }
            allowed.push(op.method.as_str());
        }
        Err((!allowed.is_empty()).then(|| allowed.join(", ")))
    }

    fn outcome(method: &str, path: &str) -> Result<(Op, String, String), Option<String>> {
        match Route::parse(method, path) {
            Ok(route) => {
                let other = route.params().find(|(p, _)| *p != Param::Id).map_or("", |(_, v)| v);
                Ok((route.op(), route.id().to_owned(), other.to_owned()))
            }
            Err(ApiError::NoRoute) => Err(None),
            Err(ApiError::MethodNotAllowed { allow }) => Err(Some(allow)),
            Err(other) => panic!("{method} {path}: {other:?}"),
        }
    }

    /// A path of `template` with `value(param)` for each parameter.
    fn fill(template: Template, value: impl Fn(Param) -> String) -> String {
        let mut path = template.as_str().to_owned();
        for param in template.params() {
            path = path.replace(&format!("{{{param}}}"), &value(param));
        }
        path
    }

    #[test]
    fn every_declared_path_parses_back_to_its_operation_and_names_are_unique() {
        let mut names = std::collections::HashSet::new();
        for op in operations() {
            assert!(names.insert(op.name), "{} declared twice", op.name);
            let example = |p: Param| format!("{p}-value");
            let route = Route::parse(op.method.as_str(), &fill(op.template, example)).unwrap();
            assert_eq!(route.op(), op, "{} {}", op.method.as_str(), op.template);
            let params: Vec<(Param, String)> = route.params().map(|(p, v)| (p, v.to_owned())).collect();
            assert_eq!(params, op.template.params().map(|p| (p, example(p))).collect::<Vec<_>>());
            assert_eq!(op.template.declares(Param::Id), !op.id_of.is_empty(), "{} names its id", op.name);
            // `{id}` comes first where there is one (the audit digest's order).
            assert!(op.template.params().skip(1).all(|p| p != Param::Id), "{}", op.template);
            assert_eq!(
                op.enqueues,
                op.answers.iter().any(|(status, _)| *status == http::StatusCode::ACCEPTED),
                "{}",
                op.name
            );
            assert!(!op.answers.is_empty(), "{} has answers", op.name);
        }
        assert_eq!(names.len(), 49);
    }

    /// No path matches two templates (so matchit's preference for a static
    /// segment never decides), and no template has one method twice.
    #[test]
    fn no_two_templates_overlap_and_no_method_is_declared_twice_for_one() {
        let segments = |t: Template| -> Vec<Option<&str>> {
            let params: Vec<usize> = t.slots.iter().flatten().map(|s| s.segment).collect();
            t.as_str()[1..].split('/').enumerate().map(|(i, s)| (!params.contains(&i)).then_some(s)).collect()
        };
        let ops: Vec<Op> = operations().collect();
        for (i, a) in ops.iter().enumerate() {
            for b in &ops[i + 1..] {
                if a.template.as_str() == b.template.as_str() {
                    assert_ne!(a.method, b.method, "{} twice", a.template);
                    continue;
                }
                let (x, y) = (segments(a.template), segments(b.template));
                let overlap = x.len() == y.len() && x.iter().zip(&y).all(|(x, y)| x.is_none() || y.is_none() || x == y);
                assert!(!overlap, "{} and {} overlap", a.template, b.template);
            }
        }
    }

    /// Every template, with awkward values and awkward slashes, parses as
    /// the hand matcher did, for every method.
    #[test]
    fn the_router_answers_as_the_hand_matcher_did() {
        let values = [
            "p1",
            "",
            "%2F",
            "a%2Fsenders",
            "%25",
            "%",
            "%7Bid%7D",
            "inboxes",
            "senders",
            "%65mails",
            "%FF",
            "é",
            "a%20b",
            "..",
            "*x",
        ];
        let methods = ["GET", "PUT", "PATCH", "POST", "DELETE", "HEAD", "get"];
        let mut paths: Vec<String> = [
            "",
            "/",
            "//",
            "/nope",
            "/inbox%65s",
            "//inboxes",
            "inboxes",
            "/inboxes/",
            "/inboxes//senders",
            "/emails?x",
        ]
        .map(str::to_owned)
        .into();
        for op in operations() {
            for value in values {
                let path = fill(op.template, |_| value.to_owned());
                paths.extend([format!("{path}/"), format!("/{path}"), format!("{path}/x"), path]);
            }
        }
        for path in &paths {
            for method in methods {
                assert_eq!(outcome(method, path), reference(method, path), "{method} {path}");
            }
        }
    }

    #[test]
    fn an_encoded_slash_stays_inside_its_parameter() {
        let route = Route::parse("GET", "/inboxes/a%2Fsenders").unwrap();
        assert_eq!((route.op(), route.id()), (&inboxes::GET, "a/senders"));
        let route = Route::parse("DELETE", "/inboxes/inb_1/senders/%40acme.com%2Fx").unwrap();
        assert_eq!((route.op(), route.id(), route.param(Param::Sender)), (&senders::REMOVE, "inb_1", "@acme.com/x"));
        assert!(matches!(Route::parse("PUT", "/emails"), Err(ApiError::MethodNotAllowed { allow }) if allow == "GET"));
        assert!(
            matches!(Route::parse("PUT", "/emails/eml_1"), Err(ApiError::MethodNotAllowed { allow }) if allow == "GET, DELETE")
        );
        assert!(matches!(Route::parse("GET", "/nope"), Err(ApiError::NoRoute)));
        // An empty segment is a parameter's (empty) value, at the end of a path or inside it.
        assert_eq!(Route::parse("GET", "/inboxes/").unwrap(), Route::new(&inboxes::GET));
        assert_eq!(Route::parse("POST", "/inboxes//senders").unwrap(), Route::new(&senders::ADD));
    }

    #[test]
    fn a_parameter_is_kept_under_its_own_name_and_an_undeclared_one_is_refused() {
        let route = Route::parse("PUT", "/org/workspaces/ws_main/members/usr_1").unwrap();
        assert_eq!((route.id(), route.param(Param::Sub), route.param(Param::Sender)), ("ws_main", "usr_1", ""));
        assert_eq!(
            route,
            Route::new(&org::MEMBER_SET).with(Param::Id, "ws_main").unwrap().with(Param::Sub, "usr_1").unwrap()
        );
        assert!(matches!(Route::new(&org::MEMBER_SET).with(Param::Sender, "a@b.example"), Err(ApiError::Unavailable)));
        assert!(matches!(Route::new(&emails::LIST).with(Param::Id, "eml_1"), Err(ApiError::Unavailable)));
        let mut route = Route::new(&webhooks::GET);
        assert!(route.param_mut(Param::Sub).is_none());
        *route.param_mut(Param::Id).unwrap() = "whk_1".into();
        assert_eq!(route.params().collect::<Vec<_>>(), [(Param::Id, "whk_1")]);
        assert_eq!(Param::named("sub"), Some(Param::Sub));
        assert_eq!(Param::named("Sub"), None);
    }
}
