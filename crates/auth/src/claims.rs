//! Where the claims this product needs are found in a token, as the
//! deployment's identity provider puts them (docs/operations.md: "Identity providers").
//!
//! - The audience: `aud` (a string or a list), or the claim named by
//!   `AUDIENCE_CLAIM` (`client_id` for Amazon Cognito, whose access tokens
//!   have no `aud`), then a single string: a client is one client.
//! - The organization: the claim named by `ORG_CLAIM` (default `org_id`;
//!   `https://example.com/org_id` for Auth0's namespaced claims,
//!   `custom:org_id` for Cognito, `tid` for Microsoft Entra ID, `organization`
//!   for Keycloak), a string, or a list or object holding exactly one; or,
//!   for a single-organization deployment, `ORG_ID`: the organization of
//!   every token that names none (the provider cannot add the claim), while a
//!   token that names another one is refused (it was issued for another
//!   organization by the same provider).
//! - The scopes: `scope` (a space-separated string) or `scp` (a list, or a
//!   space-separated string as Entra ID writes it). `SCOPE_PREFIX` is taken
//!   off each name (Cognito's resource-server identifier, `kobana-inbox/`), and
//!   `SCOPE_SEPARATOR` is the character the provider puts between the
//!   resource and the action (`.` where `:` cannot be used): names that do
//!   not fit are ignored, never guessed.

use serde_json::{Map, Value};

use inbox_domain::{OrgId, Scopes};

/// How this deployment reads organization and scopes from its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRules {
    /// Where the token names who it is for: `aud` (default), or `client_id`
    /// for providers whose access tokens carry none (Amazon Cognito).
    pub audience_claim: String,
    pub org_claim: String,
    /// A single-organization deployment's organization: that of every token
    /// without the organization claim, and the only one a token may name.
    pub fixed_org: Option<OrgId>,
    pub scope_prefix: String,
    pub scope_separator: char,
}

impl Default for ClaimRules {
    fn default() -> Self {
        ClaimRules {
            audience_claim: "aud".into(),
            org_claim: "org_id".into(),
            fixed_org: None,
            scope_prefix: String::new(),
            scope_separator: ':',
        }
    }
}

impl ClaimRules {
    /// Who the token is for: `aud` as a string or a list, any other
    /// audience claim as one string. The error is the reason to give.
    pub fn audiences<'a>(&self, claims: &'a Map<String, Value>) -> Result<Vec<&'a str>, &'static str> {
        let lacks = "The access token lacks a required claim";
        match claims.get(&self.audience_claim) {
            Some(Value::String(one)) => Ok(vec![one.as_str()]),
            Some(value) if self.audience_claim == "aud" => {
                let names = aud_names(value);
                if names.is_empty() { Err(lacks) } else { Ok(names) }
            }
            Some(_) => Err("The access token audience claim is not a single string"),
            None => Err(lacks),
        }
    }

    /// The audiences a token names in `aud` besides the configured audience
    /// claim (none when that claim is `aud` itself, or the token has no `aud`).
    pub fn other_aud<'a>(&self, claims: &'a Map<String, Value>) -> Option<Vec<&'a str>> {
        if self.audience_claim == "aud" {
            return None;
        }
        claims.get("aud").map(aud_names)
    }

    /// Whether a token must say `token_use: access`: with Amazon Cognito's
    /// audience claim, where an ID token of the same app client carries the
    /// same `client_id` and must not open the API. (A `token_use` that says
    /// anything else is refused under every configuration.)
    pub fn requires_token_use(&self) -> bool {
        self.audience_claim == "client_id"
    }

    /// The token's organization: the one it names in the organization claim,
    /// well-formed; under `ORG_ID`, that organization when the token names
    /// none or names it, and an error when it names any other (or names it
    /// malformed). The error is the reason to give.
    pub fn organization(&self, claims: &Map<String, Value>) -> Result<OrgId, &'static str> {
        let invalid = "The access token names no valid organization";
        let named = claims.get(&self.org_claim).map(|value| {
            let text = match value {
                Value::String(s) => Some(s.as_str()),
                Value::Array(items) => match items.as_slice() {
                    [Value::String(s)] => Some(s.as_str()),
                    _ => None,
                },
                Value::Object(map) if map.len() == 1 => map.keys().next().map(String::as_str),
                _ => None,
            };
            text.and_then(OrgId::parse)
        });
        match (&self.fixed_org, named) {
            (Some(org), None) => Ok(org.clone()),
            (Some(org), Some(Some(named))) if named == *org => Ok(named),
            (Some(_), Some(Some(_))) => Err("The access token names another organization"),
            (None, Some(Some(named))) => Ok(named),
            (_, _) => Err(invalid),
        }
    }

    /// The scopes the token grants, as this product names them.
    pub fn scopes(&self, claims: &Map<String, Value>) -> Scopes {
        let names: Vec<&str> = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(scope)), _) | (None, Some(Value::String(scope))) => scope.split(' ').collect(),
            (None, Some(Value::Array(scp))) => scp.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let ours: Vec<String> = names
            .into_iter()
            .filter_map(|name| name.strip_prefix(self.scope_prefix.as_str()))
            .filter_map(|name| match self.scope_separator {
                ':' => Some(name.to_owned()),
                // Names in the provider's spelling only: `inboxes.read`, not `inboxes:read`.
                other if !name.contains(':') => Some(name.replacen(other, ":", 1)),
                _ => None,
            })
            .collect();
        Scopes::from_names(ours.iter().map(String::as_str))
    }
}

/// `aud` as a string or a list of strings (other entries are not names).
fn aud_names(value: &Value) -> Vec<&str> {
    match value {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_domain::Scope;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn the_organization_is_read_from_the_configured_claim_in_any_of_its_shapes() {
        let rules = ClaimRules { org_claim: "organization".into(), ..ClaimRules::default() };
        for shape in [json!("acme"), json!(["acme"]), json!({"acme": {"id": "42"}})] {
            assert_eq!(
                rules.organization(&claims(json!({"organization": shape}))).ok(),
                OrgId::parse("acme"),
                "{shape}"
            );
        }
        for bad in [json!(["a", "b"]), json!({}), json!(7), json!("a#b")] {
            assert!(rules.organization(&claims(json!({"organization": bad}))).is_err(), "{bad}");
        }
        assert!(rules.organization(&claims(json!({"org_id": "acme"}))).is_err(), "another claim");
    }

    #[test]
    fn a_single_organization_deployment_takes_tokens_naming_it_or_none_and_refuses_any_other() {
        let fixed = ClaimRules { fixed_org: OrgId::parse("org_solo"), ..ClaimRules::default() };
        let org = |v: Value| fixed.organization(&claims(v));
        assert_eq!(org(json!({"sub": "x"})).ok(), OrgId::parse("org_solo"), "no organization claim");
        assert_eq!(org(json!({"org_id": "org_solo"})).ok(), OrgId::parse("org_solo"));
        assert_eq!(org(json!({"org_id": ["org_solo"]})).ok(), OrgId::parse("org_solo"));
        for other in [json!("org_other"), json!("evil_corp"), json!("a#b"), json!(null), json!(["org_solo", "x"])] {
            assert!(org(json!({"org_id": other})).is_err(), "{other}");
        }
    }

    #[test]
    fn aud_may_be_a_list_but_another_audience_claim_is_one_string() {
        let aud = ClaimRules::default();
        assert_eq!(aud.audiences(&claims(json!({"aud": ["a", "b"]}))), Ok(vec!["a", "b"]));
        assert!(aud.audiences(&claims(json!({"aud": []}))).is_err());
        let cognito = ClaimRules { audience_claim: "client_id".into(), ..ClaimRules::default() };
        assert_eq!(cognito.audiences(&claims(json!({"client_id": "c1"}))), Ok(vec!["c1"]));
        assert!(cognito.audiences(&claims(json!({"client_id": ["c1"]}))).is_err());
        assert!(cognito.audiences(&claims(json!({"aud": "c1"}))).is_err());
    }

    #[test]
    fn scopes_come_from_scope_or_scp_with_the_prefix_and_separator_of_the_provider() {
        let plain = ClaimRules::default();
        let both = |s: Scopes| (s.contains(Scope::EmailsRead), s.contains(Scope::InboxesRead));
        assert_eq!(both(plain.scopes(&claims(json!({"scope": "emails:read inboxes:read"})))), (true, true));
        assert_eq!(both(plain.scopes(&claims(json!({"scp": ["emails:read"]})))), (true, false));
        assert_eq!(both(plain.scopes(&claims(json!({"scp": "emails:read inboxes:read"})))), (true, true));
        let cognito = ClaimRules { scope_prefix: "kobana-inbox/".into(), ..ClaimRules::default() };
        let s = cognito.scopes(&claims(json!({"scope": "kobana-inbox/emails:read emails:write other/inboxes:read"})));
        assert_eq!(
            (s.contains(Scope::EmailsRead), s.contains(Scope::EmailsWrite), s.contains(Scope::InboxesRead)),
            (true, false, false)
        );
        let dotted = ClaimRules { scope_separator: '.', ..ClaimRules::default() };
        let s = dotted.scopes(&claims(json!({"scp": "emails.read inboxes:read"})));
        assert_eq!(both(s), (true, false), "a name in the other spelling is not guessed");
    }
}
