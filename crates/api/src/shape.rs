//! What a caller sends, declared once as Rust types: each operation's body is
//! a struct that derives `Deserialize` and `JsonSchema`, and every value rule
//! (a length, a count, the characters a caller's text may not hold, a slug's
//! alphabet) lives in a value type here whose `Deserialize` enforces it and
//! whose `JsonSchema` publishes it, from the same constants. The published
//! schemas (the tools' `inputSchema`, the OpenAPI request bodies) are
//! generated from those types (`input_schema`), and the same compiled schema
//! checks a REST body and a tool's arguments before anything else reads them
//! (`Checker`), so one violation is one error on both surfaces:
//!
//! | violation | REST | MCP tool error |
//! |---|---|---|
//! | a value rule of a body field (length, count, range, format, a value not in its list, a refused character) | 422 `validation_failed`, `details.field` | `validation_failed`, `details.field` |
//! | a value rule of a query parameter | 400 `invalid_parameter`, `details.parameter` | `invalid_parameter`, `details.parameter` |
//! | the shape (unknown or missing field, JSON type, `null`); any rule of a path parameter | 400 `invalid_body` | `invalid_arguments` (path, query and body arguments are one object) |
//!
//! A character no caller's text may hold is looked for first, in every string
//! of the body or the arguments (`input::caller_arguments`), on both
//! surfaces: its message names the character, which says more than the rule
//! the string would break next. A body of third-party text (the pipeline's
//! ingestion: `Body::copied`) is exempt, as it is stored as received.
//!
//! The checker is `jsonschema`, compiled once per schema on first use (a
//! check costs about 0.1 µs on this machine: `make bench` measures the whole
//! request). What a schema cannot say (a text that trims to nothing, a
//! character a caller may not use, a slug's alphabet, an address) is said by
//! the value type's `Deserialize`, with the same error (`VALUE_RULE`).

use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Value, json};

use super::error::ApiError;
use super::input::{self, VALUE_RULE};

/// What every caller's text field says of the characters it may not hold
/// (`api::input::caller_text`). JSON Schema could say it with a `pattern`,
/// but the ranges reach past the Basic Multilingual Plane (tags), where the
/// dialects of the clients' pattern engines differ; so the description says
/// it, and `Text`'s `Deserialize` checks it.
pub const CALLER_TEXT: &str = "No control characters (C0, C1: tab, line feed, escape, ...), line or paragraph separators (U+2028, U+2029) or invisible format characters (bidirectional controls, zero-width characters, tags U+E0000-U+E007F): refused naming the character";

/// The key a caller's text type leaves in its schema so that `portable`
/// appends `CALLER_TEXT` to the field's own description (schemars lets a
/// field's doc comment replace a type's description, not extend it).
const CALLER_TEXT_MARK: &str = "x-caller-text";

/// A `Deserialize` error for a broken value rule: 422 `validation_failed`
/// naming the field (`input::from_value`).
pub fn value_rule<E: de::Error>(why: impl fmt::Display) -> E {
    E::custom(format_args!("{VALUE_RULE}{why}"))
}

// ------------------------------------------------------------------ schemas

/// The schema `T` publishes as input: JSON Schema 2020-12, inline (no
/// `$defs`), and portable to the model providers' one-type-per-schema
/// dialects (`portable`).
pub fn input_schema<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.meta_schema = None;
        s.inline_subschemas = true;
    });
    let mut schema = SchemaGenerator::new(settings).into_root_schema_for::<T>().to_value();
    portable(&mut schema);
    schema
}

/// The schema of what `T` serialises to, as an answer shows it: inline,
/// strict (`additionalProperties: false` on every object), a field without a
/// value `null` (a type array), a field that may be left out (a
/// `skip_serializing_if`) not required, a `#[schemars(skip)]` field never
/// shown (and so refused by the strict object).
pub fn output_schema<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().for_serialize().with(|s| {
        s.meta_schema = None;
        s.inline_subschemas = true;
    });
    let mut schema = SchemaGenerator::new(settings).into_root_schema_for::<T>().to_value();
    strict(&mut schema);
    schema
}

/// Whether a `format` is one schemars writes for Rust's integer widths
/// (`uint32`, `int64`, …): not a JSON Schema format, and a client whose
/// validator is strict about unknown formats (Ajv's default) would refuse
/// the whole schema. The bounds say what the width did.
fn width_format(format: Option<&Value>) -> bool {
    format.and_then(Value::as_str).is_some_and(|f| {
        let digits = f.strip_prefix("uint").or_else(|| f.strip_prefix("int"));
        digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    })
}

fn strict(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.remove("title");
            if width_format(map.get("format")) {
                map.remove("format");
            }
            if map.contains_key("properties") {
                map.entry("additionalProperties").or_insert(Value::Bool(false));
            }
            map.values_mut().for_each(strict);
        }
        Value::Array(items) => items.iter_mut().for_each(strict),
        _ => {}
    }
}

/// Rewrites a generated input schema: an optional field (`Option<T>`) is
/// left out, never `null` (the checker refuses `null` where the schema has
/// no `null`), so its `null` alternative goes; titles go (the field names
/// say it); a caller's text gets `CALLER_TEXT` after its own description.
fn portable(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.remove("title");
            if width_format(map.get("format")) {
                map.remove("format");
            }
            if let Some(Value::Array(types)) = map.get("type") {
                let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                let single = <[Value; 1]>::try_from(rest);
                match single {
                    Ok([one]) => map.insert("type".into(), one),
                    Err(rest) => map.insert("type".into(), Value::Array(rest)),
                };
            }
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            if let Some(Value::Array(branches)) = map.get("anyOf") {
                let rest: Vec<&Value> = branches.iter().filter(|b| b.get("type") != Some(&json!("null"))).collect();
                if let [only] = rest.as_slice()
                    && let Value::Object(inner) = (*only).clone()
                {
                    map.remove("anyOf");
                    for (key, value) in inner {
                        map.entry(key).or_insert(value);
                    }
                }
            }
            if map.remove(CALLER_TEXT_MARK).is_some() {
                let text = match map.get("description").and_then(Value::as_str) {
                    Some(own) => format!("{own}. {CALLER_TEXT}"),
                    None => CALLER_TEXT.to_owned(),
                };
                map.insert("description".into(), Value::from(text));
            }
            for value in map.values_mut() {
                portable(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(portable),
        _ => {}
    }
}

// ----------------------------------------------------------------- checking

/// A schema compiled for checking, on first use (a container that never
/// serves the operation never compiles it).
pub struct Checker {
    compiled: OnceLock<Option<jsonschema::Validator>>,
}

impl Default for Checker {
    fn default() -> Self {
        Checker::new()
    }
}

/// Where the checked value goes: what its errors are called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A REST request's JSON body.
    Body,
    /// A tool's arguments whose non-path part is a query (GET, DELETE).
    QueryArguments,
    /// A tool's arguments whose non-path part is a body.
    BodyArguments,
    /// A tool's arguments, where the violation has no REST counterpart (a
    /// path parameter's): always `invalid_arguments`.
    ArgumentsShape,
}

/// What the checker found first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// `attachments[3].name`; empty for the value as a whole.
    pub field: String,
    pub message: String,
    /// A value rule (length, count, range, format, a value not in its list),
    /// as opposed to the shape.
    pub value_rule: bool,
}

impl Checker {
    pub const fn new() -> Checker {
        Checker { compiled: OnceLock::new() }
    }

    /// The first violation in `value` of the schema `schema` makes (called
    /// to compile it, once, and to name an unknown field's alternatives). A
    /// schema that does not compile (a bug every test would show: the tests
    /// compile every published schema) checks nothing rather than refusing
    /// every call; the types' own `Deserialize` still holds the value rules.
    pub fn violation(&self, schema: &dyn Fn() -> Value, value: &Value) -> Option<Violation> {
        let validator = self
            .compiled
            .get_or_init(|| {
                let built = jsonschema::options().should_validate_formats(true).build(&schema());
                built.map_err(|e| tracing::error!(error = %e, "schema does not compile")).ok()
            })
            .as_ref()?;
        let error = validator.validate(value).err()?;
        Some(describe(&error, &schema()))
    }

    /// The violation as the error of its place (the table in the module docs).
    pub fn check(&self, schema: &dyn Fn() -> Value, value: &Value, place: Place) -> Result<(), ApiError> {
        match self.violation(schema, value) {
            None => Ok(()),
            Some(violation) => Err(violation.error(place)),
        }
    }
}

/// Readies the checker's library: its first compilation in a process builds
/// the meta-schema's own validator (about 1.2 ms; a later schema compiles in
/// about 15 µs). The composition root calls this while the container's first
/// network round trips are in flight, so no caller's first call pays it.
pub fn warm_up() {
    let _ = jsonschema::options().build(&json!({"type": "object"}));
}

/// Whether `schema` compiles as the checker compiles it (for the tests:
/// a published schema that does not would check nothing).
pub fn compiles(schema: &Value) -> bool {
    jsonschema::options().should_validate_formats(true).build(schema).is_ok()
}

impl Violation {
    pub fn error(&self, place: Place) -> ApiError {
        let message = match self.field.as_str() {
            "" => self.message.clone(),
            field => format!("{field}: {}", self.message),
        };
        match (self.value_rule, place) {
            (true, Place::Body | Place::BodyArguments) => {
                ApiError::invalid(if self.field.is_empty() { "body" } else { &self.field }, &self.message)
            }
            (true, Place::QueryArguments) => input::invalid_parameter(&self.field, &self.message),
            (false, Place::Body) => ApiError::bad_request("invalid_body", message, json!({"field": self.field})),
            (_, Place::ArgumentsShape) | (false, Place::QueryArguments | Place::BodyArguments) => {
                ApiError::bad_request("invalid_arguments", message, json!({"field": self.field}))
            }
        }
    }
}

/// `attachments[3].name` from the JSON pointer `/attachments/3/name`.
fn field_name(error: &jsonschema::ValidationError<'_>) -> String {
    let mut out = String::new();
    for segment in error.instance_path().iter() {
        match segment {
            jsonschema::paths::LocationSegment::Index(i) => out.push_str(&format!("[{i}]")),
            jsonschema::paths::LocationSegment::Property(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&name);
            }
        }
    }
    out
}

fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() { child.to_owned() } else { format!("{parent}.{child}") }
}

/// The properties an object at `field` of `schema` takes (for an unknown
/// field's message); the root's only, which is where callers go wrong.
fn known(schema: &Value, field: &str) -> String {
    let properties = if field.is_empty() { schema.get("properties").and_then(Value::as_object) } else { None };
    properties.map(|p| p.keys().map(String::as_str).collect::<Vec<_>>().join(", ")).unwrap_or_default()
}

fn describe(error: &jsonschema::ValidationError<'_>, schema: &Value) -> Violation {
    use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
    let at = field_name(error);
    let shape = |field: String, message: String| Violation { field, message, value_rule: false };
    let rule = |message: String| Violation { field: at.clone(), message, value_rule: true };
    match error.kind() {
        Kind::AdditionalProperties { unexpected } => {
            let name = unexpected.first().map(String::as_str).unwrap_or_default();
            let known = known(schema, &at);
            let message = if known.is_empty() {
                "unknown field".to_owned()
            } else {
                format!("unknown field; this takes {known}")
            };
            shape(join(&at, name), message)
        }
        Kind::Required { property } => shape(join(&at, property.as_str().unwrap_or_default()), "is required".into()),
        Kind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" or "),
            };
            let article = if expected.starts_with(['a', 'i', 'o']) { "an" } else { "a" };
            shape(at.clone(), format!("must be {article} {expected}"))
        }
        Kind::Enum { options } => {
            let names: Vec<String> = options
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            rule(format!("must be {}", input::or_list(&names.iter().map(String::as_str).collect::<Vec<_>>())))
        }
        Kind::Constant { expected_value } => rule(format!("must be {expected_value}")),
        Kind::MinLength { limit } => rule(format!("must have at least {limit} characters")),
        Kind::MaxLength { limit } => rule(format!("must have at most {limit} characters")),
        Kind::Minimum { limit } => rule(format!("must be at least {limit}")),
        Kind::Maximum { limit } => rule(format!("must be at most {limit}")),
        Kind::MinItems { limit } => rule(format!("must have at least {limit} items")),
        Kind::MaxItems { limit } => rule(format!("must have at most {limit} items")),
        Kind::UniqueItems => rule("must not repeat items".into()),
        Kind::MinProperties { .. } => {
            let known = known(schema, &at);
            rule(format!("give at least one of {known}"))
        }
        Kind::Format { format } => rule(match format.as_str() {
            "date-time" => "must be an RFC 3339 timestamp".to_owned(),
            "email" => "must be an e-mail address".to_owned(),
            other => format!("must be a valid {other}"),
        }),
        _ => shape(at.clone(), "does not fit its schema".into()),
    }
}

// -------------------------------------------------------------- the bodies

/// An operation's JSON body: the type that parses it (`Input::body`) and,
/// from it, the published schema and its checker.
pub struct Body {
    schema: fn() -> Value,
    checker: Checker,
    /// Its strings are a caller's text (`input::caller_arguments` applies),
    /// rather than third-party text copied from an e-mail.
    callers_text: bool,
    /// The Rust type's name, so that a handler parsing another type than
    /// the one its operation declares fails every test that calls it.
    pub type_name: fn() -> &'static str,
}

impl Body {
    pub const fn of<T: JsonSchema + DeserializeOwned>() -> Body {
        Body {
            schema: input_schema::<T>,
            checker: Checker::new(),
            callers_text: true,
            type_name: std::any::type_name::<T>,
        }
    }

    /// A body of third-party text, kept as received (its own types bound it).
    pub const fn copied<T: JsonSchema + DeserializeOwned>() -> Body {
        Body {
            schema: input_schema::<T>,
            checker: Checker::new(),
            callers_text: false,
            type_name: std::any::type_name::<T>,
        }
    }

    /// The schema, as published.
    pub fn schema(&self) -> Value {
        (self.schema)()
    }

    /// A REST body against it: the characters first, then the schema.
    pub fn check(&self, value: &Value) -> Result<(), ApiError> {
        if self.callers_text
            && let Value::Object(map) = value
        {
            input::caller_arguments(map)?;
        }
        self.checker.check(&self.schema, value, Place::Body)
    }
}

/// `body: Some(body!(UpsertBody))` in an operation's declaration: the body
/// type's `Body`, a `static` of its own (its checker compiles once, and an
/// `Operation` built by struct update syntax must hold nothing to drop).
#[macro_export]
macro_rules! body {
    ($type:ty) => {{
        static BODY: $crate::shape::Body = $crate::shape::Body::of::<$type>();
        &BODY
    }};
    ($type:ty, copied) => {{
        static BODY: $crate::shape::Body = $crate::shape::Body::copied::<$type>();
        &BODY
    }};
}
pub use crate::body;

// -------------------------------------------------------------- value types

/// Deserialises a string and passes it through `rule`.
fn string_with<'de, D, T>(deserializer: D, rule: fn(&str) -> Result<T, String>) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct Text<T>(fn(&str) -> Result<T, String>, PhantomData<T>);
    impl<T> Visitor<'_> for Text<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
            (self.0)(value).map_err(value_rule)
        }
    }
    deserializer.deserialize_str(Text(rule, PhantomData))
}

/// A caller's text (a name, a description, a URL) of `MIN..=MAX` characters,
/// trimmed: none of the characters `inbox_domain::text` refuses (checked
/// before trimming, so a separator at either end is refused, not dropped),
/// and not blank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<const MIN: usize, const MAX: usize>(String);

impl<const MIN: usize, const MAX: usize> Text<MIN, MAX> {
    fn parse(value: &str) -> Result<Self, String> {
        if let Some(why) = input::refusal(value) {
            return Err(why);
        }
        let trimmed = value.trim();
        let count = trimmed.chars().count();
        if trimmed.is_empty() {
            return Err("must not be empty".into());
        }
        if count > MAX {
            return Err(format!("must have at most {MAX} characters"));
        }
        if count < MIN {
            return Err(format!("must have at least {MIN} characters"));
        }
        Ok(Text(trimmed.to_owned()))
    }

    pub fn into_string(self) -> String {
        self.0
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de, const MIN: usize, const MAX: usize> Deserialize<'de> for Text<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string_with(deserializer, Self::parse)
    }
}

impl<const MIN: usize, const MAX: usize> JsonSchema for Text<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Text_{MIN}_{MAX}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": MIN, "maxLength": MAX, CALLER_TEXT_MARK: true})
    }
}

/// A display name: an inbox's, a workspace's, the organization's.
pub type Name = Text<1, 120>;

/// A slug: lowercase letters, digits and `-`, 2 to 63, starting with a
/// letter or digit (an inbox's in its workspace, a workspace's in its
/// organization).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slug(String);

impl Slug {
    fn parse(value: &str) -> Result<Slug, String> {
        if let Some(why) = input::refusal(value) {
            return Err(why);
        }
        let ok = (2..=63).contains(&value.len())
            && value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && value.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric());
        if ok { Ok(Slug(value.to_owned())) } else { Err("must be 2-63 lowercase letters, digits or -".into()) }
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for Slug {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string_with(deserializer, Slug::parse)
    }
}

impl JsonSchema for Slug {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Slug".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": 2, "maxLength": 63, "description": "Lowercase letters, digits and -", CALLER_TEXT_MARK: true})
    }
}

/// An e-mail address as the mail pipeline gives it, lowercased: a local part
/// and a domain with a dot, at most 254 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address(String);

impl Address {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for Address {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string_with(deserializer, |value| {
            input::email_address("", value).map(Address).map_err(|_| "must be an e-mail address".to_owned())
        })
    }
}

impl JsonSchema for Address {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Address".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": 3, "maxLength": 254})
    }
}

/// Third-party text copied from an e-mail (a subject, a body, an attachment's
/// name): kept as received, only bounded — at most `MAX` characters and,
/// when `MIN` is 1, not blank and free of control characters
/// (`input::bounded`, as the pipeline's attachment metadata always was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied<const MIN: usize, const MAX: usize>(String);

impl<const MIN: usize, const MAX: usize> Copied<MIN, MAX> {
    fn parse(value: &str) -> Result<Self, String> {
        if MIN > 0 {
            return match input::bounded("", value, MAX) {
                Ok(_) => Ok(Copied(value.to_owned())),
                Err(ApiError::Unprocessable { message, .. }) => Err(message),
                Err(_) => Err("is not acceptable".into()),
            };
        }
        if value.chars().count() > MAX {
            return Err(format!("must have at most {MAX} characters"));
        }
        Ok(Copied(value.to_owned()))
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de, const MIN: usize, const MAX: usize> Deserialize<'de> for Copied<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string_with(deserializer, Self::parse)
    }
}

impl<const MIN: usize, const MAX: usize> JsonSchema for Copied<MIN, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Copied_{MIN}_{MAX}").into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        if MIN == 0 {
            json_schema!({"type": "string", "maxLength": MAX})
        } else {
            json_schema!({"type": "string", "minLength": MIN, "maxLength": MAX})
        }
    }
}

/// An e-mail's body as text, copied from the e-mail: at most
/// `inbox_mail::MAX_TEXT_BYTES` bytes of UTF-8 (and so at most that many
/// characters, what the schema can say): the record that holds it is one
/// DynamoDB item, 400 KB at most with everything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyText(String);

impl BodyText {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for BodyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        string_with(deserializer, |value| {
            let max = inbox_mail::MAX_TEXT_BYTES;
            if value.len() > max {
                Err(format!("must be at most {max} bytes of UTF-8"))
            } else {
                Ok(BodyText(value.to_owned()))
            }
        })
    }
}

impl JsonSchema for BodyText {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BodyText".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let max = inbox_mail::MAX_TEXT_BYTES;
        json_schema!({"type": "string", "maxLength": max})
    }
}

/// A list of at most `MAX` items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List<T, const MAX: usize>(Vec<T>);

impl<T, const MAX: usize> List<T, MAX> {
    pub fn into_vec(self) -> Vec<T> {
        self.0
    }
}

impl<T, const MAX: usize> Default for List<T, MAX> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for List<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let items = Vec::<T>::deserialize(deserializer)?;
        if items.len() > MAX {
            return Err(value_rule(format_args!("must have at most {MAX} items")));
        }
        Ok(List(items))
    }
}

impl<T: JsonSchema, const MAX: usize> JsonSchema for List<T, MAX> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("List_{MAX}_of_{}", T::schema_name()).into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "array", "maxItems": MAX, "items": generator.subschema_for::<T>()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        /// The name
        name: Name,
        slug: Option<Slug>,
        things: Option<List<Text<1, 5>, 2>>,
    }

    #[test]
    fn a_generated_input_schema_is_inline_portable_and_says_its_rules() {
        let schema = input_schema::<Sample>();
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["name"]));
        assert_eq!(schema["properties"]["name"]["maxLength"], 120);
        assert_eq!(schema["properties"]["name"]["description"], format!("The name. {CALLER_TEXT}"));
        assert_eq!(schema["properties"]["slug"]["type"], "string", "an optional field is left out, never null");
        assert_eq!(schema["properties"]["things"]["maxItems"], 2);
        assert!(!schema.to_string().contains("$defs") && !schema.to_string().contains("title"), "{schema}");
    }

    #[test]
    fn the_checker_and_the_types_refuse_the_same_values_with_the_same_error() {
        let checker = Body::of::<Sample>();
        let long = "x".repeat(121);
        for (body, field, code) in [
            (json!({"name": long}), "name", "validation_failed"),
            (json!({"name": "a", "things": ["a", "b", "c"]}), "things", "validation_failed"),
            (json!({"name": "a", "things": ["abcdef"]}), "things[0]", "validation_failed"),
            (json!({"name": "a", "zzz": 1}), "zzz", "invalid_body"),
            (json!({"name": "a\u{2028}", "zzz": 1}), "name", "validation_failed"),
            (json!({"name": 5}), "name", "invalid_body"),
            (json!({"name": "a", "slug": null}), "slug", "invalid_body"),
        ] {
            let error = checker.check(&body).expect_err(&body.to_string());
            let answer = error.body();
            assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
            assert_eq!(answer["error"]["details"]["field"], field, "{body}: {answer}");
            if code == "validation_failed" {
                // The type refuses it too, with the same code and field.
                let parsed = input::from_value::<Sample>(body.clone()).err().expect("refused by the type");
                assert_eq!(parsed.body()["error"]["code"], code, "{body}");
                assert_eq!(parsed.body()["error"]["details"]["field"], field, "{body}");
            }
        }
        assert!(checker.check(&json!({"name": "ok", "slug": "a-b"})).is_ok());
        // What only the type can say: a blank name, a refused character, a slug's alphabet.
        for body in [json!({"name": "   "}), json!({"name": "a", "slug": "A_b"})] {
            assert!(checker.check(&body).is_ok(), "{body}");
            let error = input::from_value::<Sample>(body.clone()).err().expect("refused");
            assert_eq!(error.body()["error"]["code"], "validation_failed", "{body}");
        }
    }
}
