//! `kobana-inbox-mcp admin …`: the organization administration of a
//! deployed stack from a shell, for its first administrator and for
//! scripts. It reads the table named by `TABLE_NAME` with the standard AWS
//! credential chain (`AWS_PROFILE`, `AWS_REGION`, …) and calls the same
//! operations as the `/api/v1/org` routes (`crate::api::org`), audited with
//! surface `cli` and the subject `--as` names (default `cli:$USER`).
//! `--dry-run` reads the table and prints the items the change would write,
//! writing nothing.
//!
//! `admin workspace shards` is the operator's: it raises a workspace's write
//! shards (`crate::domain::shards`; docs/operations.md, "Raising a
//! workspace's write shards") and is no API operation — what a workspace
//! costs to list is the operator's decision, not its administrator's.
//!
//! Exit codes: 0 done; 2 the command line is wrong (usage on stderr); 3 the
//! operation refused (its error code and message on stderr: not found,
//! last admin, slug taken, invalid value); 4 the table could not be reached
//! or the configuration is wrong.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::api::audit::Origin;
use crate::api::error::ApiError;
use crate::api::{self, Input, Op, Route, Services, org};
use crate::auth::Principal;
use crate::domain::records::Surface;
use crate::domain::{OrgId, Scope, Scopes, Tenant};
use crate::secrets::Secrets;
use crate::store::Store;

/// One command: its words, what it does, its flags, and how it calls its
/// operation (the path's id and subject from flags, the rest as arguments).
struct Command {
    words: &'static [&'static str],
    about: &'static str,
    op: Op,
    /// Required flags; `--org` always is.
    flags: &'static [&'static str],
    /// Optional flags.
    optional: &'static [&'static str],
}

const COMMANDS: &[Command] = &[
    Command {
        words: &["org", "create"],
        about: "Create (or rename) the organization",
        op: &org::NAME,
        flags: &["name"],
        optional: &[],
    },
    Command {
        words: &["org-admin", "add"],
        about: "Make a person an organization administrator (org_admin)",
        op: &org::ADMIN_ADD,
        flags: &["subject"],
        optional: &[],
    },
    Command {
        words: &["org-admin", "remove"],
        about: "Take org_admin away from a person (never from the last one)",
        op: &org::ADMIN_REMOVE,
        flags: &["subject"],
        optional: &[],
    },
    Command {
        words: &["org-admin", "list"],
        about: "List the organization's administrators",
        op: &org::ADMINS,
        flags: &[],
        optional: &["limit", "cursor"],
    },
    Command {
        words: &["workspace", "create"],
        about: "Create a workspace (its id is chosen by the server)",
        op: &org::WORKSPACE_CREATE,
        flags: &["name", "slug"],
        optional: &[],
    },
    Command {
        words: &["workspace", "list"],
        about: "List the organization's workspaces",
        op: &org::WORKSPACES,
        flags: &[],
        optional: &["limit", "cursor"],
    },
    Command {
        words: &["workspace", "rename"],
        about: "Rename a workspace",
        op: &org::WORKSPACE_RENAME,
        flags: &["workspace", "name"],
        optional: &[],
    },
    Command {
        words: &["workspace", "archive"],
        about: "Archive a workspace (its admins still read it; nothing in it changes)",
        op: &org::WORKSPACE_ARCHIVE,
        flags: &["workspace"],
        optional: &[],
    },
    Command {
        words: &["member", "set"],
        about: "Add a person to a workspace, or change their role (viewer, operator, admin)",
        op: &org::MEMBER_SET,
        flags: &["workspace", "subject", "role"],
        optional: &[],
    },
    Command {
        words: &["member", "remove"],
        about: "Take a person out of a workspace (never its last admin)",
        op: &org::MEMBER_REMOVE,
        flags: &["workspace", "subject"],
        optional: &[],
    },
    Command {
        words: &["member", "list"],
        about: "List a workspace's members",
        op: &org::MEMBERS,
        flags: &["workspace"],
        optional: &["limit", "cursor"],
    },
    Command {
        words: &["pipeline", "register"],
        about: "Register a machine client's subject as a workspace's mail pipeline",
        op: &org::PIPELINE_REGISTER,
        flags: &["workspace", "subject"],
        optional: &[],
    },
    Command {
        words: &["pipeline", "unregister"],
        about: "Take back a mail pipeline registration",
        op: &org::PIPELINE_UNREGISTER,
        flags: &["workspace", "subject"],
        optional: &[],
    },
    Command {
        words: &["pipeline", "list"],
        about: "List a workspace's mail pipelines",
        op: &org::PIPELINES,
        flags: &["workspace"],
        optional: &["limit", "cursor"],
    },
];

const GLOBAL: &str = "Global flags: --org ORG (required), --as SUBJECT (who the audit trail names; default cli:$USER), \
--dry-run (print the items a change would write; write nothing). Environment: TABLE_NAME, AWS_REGION, \
the AWS credential chain; DYNAMODB_ENDPOINT for a local table.";

fn usage() -> String {
    let mut text = String::from("usage: kobana-inbox-mcp admin <command> [flags]\n\ncommands:\n");
    for c in COMMANDS {
        text.push_str(&format!("  {:<22} {}\n", c.words.join(" "), c.about));
    }
    text.push_str(&format!("  {:<22} {}\n", "workspace shards", SHARDS_ABOUT));
    text.push_str(&format!("\n{GLOBAL}\nEach command takes --help.\n"));
    text
}

const SHARDS_ABOUT: &str = "Raise a workspace's write shards (operators: docs/capacity.md)";

fn shards_usage() -> String {
    format!(
        "usage: kobana-inbox-mcp admin workspace shards --org ORG --workspace WORKSPACE --count N\n\n{SHARDS_ABOUT}. \
         The count only grows (1 to {}); lists read the new shards at once, records are written to them \
         {} s later.\n",
        crate::domain::shards::MAX_SHARDS,
        crate::domain::Shards::WRITE_DELAY_SECS
    )
}

/// `admin workspace shards`: straight to the store (not an API operation).
async fn shards(args: &[String]) -> Result<(), Failure> {
    let mut values = BTreeMap::new();
    let mut flags = args.iter();
    while let Some(flag) = flags.next() {
        let name = flag.trim_start_matches("--");
        if name == "help" {
            return Err(Failure::Usage(shards_usage()));
        }
        if !["org", "workspace", "count"].contains(&name) || !flag.starts_with("--") {
            return Err(Failure::Usage(format!("unknown flag {flag}\n\n{}", shards_usage())));
        }
        let Some(value) = flags.next() else { return Err(Failure::Usage(format!("{flag} needs a value"))) };
        values.insert(name.to_owned(), value.clone());
    }
    let get = |name: &str| values.get(name).map(String::as_str).unwrap_or_default();
    let (Some(org), Some(ws), Ok(count)) =
        (OrgId::parse(get("org")), crate::domain::WorkspaceId::parse(get("workspace")), get("count").parse::<u16>())
    else {
        return Err(Failure::Usage(shards_usage()));
    };
    let config = crate::config::store_from_env().map_err(|e| Failure::Unavailable(e.to_string()))?;
    let store = Store::connect(&config).await;
    let now = crate::sys::unix_now();
    match store.set_write_shards(&org, &ws, count, now).await {
        Ok(s) => {
            let body = serde_json::json!({"workspace": ws.as_str(), "count": s.count, "previous": s.previous,
                "read_now": s.read_count(), "written_from": s.changed_at + crate::domain::Shards::WRITE_DELAY_SECS});
            println!("{}", serde_json::to_string_pretty(&body).unwrap_or_default());
            Ok(())
        }
        Err(crate::store::StoreError::NotFound) => {
            Err(Failure::Refused(format!("workspace_not_found: {ws} is not a workspace of {org}")))
        }
        Err(crate::store::StoreError::Conflict) => Err(Failure::Refused(format!(
            "invalid_count: the count only grows, from what the workspace has to at most {}",
            crate::domain::shards::MAX_SHARDS
        ))),
        Err(crate::store::StoreError::ShardsRaisedRecently { from }) => Err(Failure::Refused(format!(
            "shards_raised_recently: {ws}'s write shards were raised less than {} h ago; raise them again from {from} \
             (unix seconds) — docs/capacity.md, \"Raising a workspace's write shards\"",
            crate::domain::Shards::KEYED_GRACE_SECS / 3600
        ))),
        Err(e) => Err(Failure::Unavailable(format!("the table could not be reached: {e}"))),
    }
}

fn command_usage(c: &Command) -> String {
    let mut flags: Vec<String> = vec!["--org ORG".into()];
    flags.extend(c.flags.iter().map(|f| format!("--{f} {}", f.to_uppercase())));
    flags.extend(c.optional.iter().map(|f| format!("[--{f} {}]", f.to_uppercase())));
    format!("usage: kobana-inbox-mcp admin {} {}\n\n{}.\n\n{GLOBAL}\n", c.words.join(" "), flags.join(" "), c.about)
}

/// What went wrong, and the exit code that says so.
enum Failure {
    Usage(String),
    Refused(String),
    Unavailable(String),
}

impl Failure {
    fn exit(self) -> ExitCode {
        let (code, message) = match self {
            Failure::Usage(m) => (2, m),
            Failure::Refused(m) => (3, m),
            Failure::Unavailable(m) => (4, m),
        };
        eprintln!("{}", message.trim_end());
        ExitCode::from(code)
    }
}

/// The parsed command line: the command, its flags, and the global ones.
struct Parsed<'c> {
    command: &'c Command,
    values: BTreeMap<String, String>,
    dry_run: bool,
}

fn parse(args: &[String]) -> Result<Parsed<'static>, Failure> {
    let words: Vec<&str> = args.iter().map(String::as_str).take_while(|a| !a.starts_with("--")).collect();
    let rest: Vec<&str> = args.iter().map(String::as_str).skip(words.len()).collect();
    let Some(command) = COMMANDS.iter().find(|c| c.words == words.as_slice()) else {
        return Err(Failure::Usage(match words.as_slice() {
            [] => usage(),
            _ => format!("unknown command: {}\n\n{}", words.join(" "), usage()),
        }));
    };
    let mut values = BTreeMap::new();
    let mut dry_run = false;
    let mut flags = rest.into_iter();
    while let Some(flag) = flags.next() {
        let name = flag.trim_start_matches("--");
        match name {
            "help" => return Err(Failure::Usage(command_usage(command))),
            "dry-run" => dry_run = true,
            _ => {
                let known =
                    ["org", "as"].contains(&name) || command.flags.contains(&name) || command.optional.contains(&name);
                if !known || !flag.starts_with("--") {
                    return Err(Failure::Usage(format!("unknown flag {flag}\n\n{}", command_usage(command))));
                }
                let Some(value) = flags.next() else {
                    return Err(Failure::Usage(format!("{flag} needs a value\n\n{}", command_usage(command))));
                };
                if values.insert(name.to_owned(), value.to_owned()).is_some() {
                    return Err(Failure::Usage(format!("{flag} is given twice")));
                }
            }
        }
    }
    for required in std::iter::once(&"org").chain(command.flags) {
        if !values.contains_key(*required) {
            return Err(Failure::Usage(format!("--{required} is required\n\n{}", command_usage(command))));
        }
    }
    Ok(Parsed { command, values, dry_run })
}

/// Runs `admin <args>`; the exit code says how it ended (module docs).
pub async fn run(args: &[String]) -> ExitCode {
    match execute(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit(),
    }
}

async fn execute(args: &[String]) -> Result<(), Failure> {
    if let [first, second, rest @ ..] = args
        && first == "workspace"
        && second == "shards"
    {
        return shards(rest).await;
    }
    let parsed = parse(args)?;
    let org = parsed.values.get("org").map(String::as_str).unwrap_or_default();
    let org =
        OrgId::parse(org).ok_or_else(|| Failure::Usage("--org must be 1 to 64 letters, digits, _ or -".into()))?;
    let config = crate::config::store_from_env().map_err(|e| Failure::Unavailable(e.to_string()))?;
    let store = Store::connect(&config).await;
    let store = if parsed.dry_run { store.dry_run() } else { store };
    let answer = call(&store, &org, &parsed).await;
    if parsed.dry_run {
        println!("dry run: nothing was written; the change would write:");
        for line in store.described_writes() {
            println!("  {line}");
        }
    }
    match answer {
        Ok(body) => {
            println!("{}", serde_json::to_string_pretty(&body).unwrap_or_else(|_| body.to_string()));
            Ok(())
        }
        Err(ApiError::Unavailable) => Err(Failure::Unavailable(
            "the table could not be reached (check TABLE_NAME, AWS_REGION and credentials)".into(),
        )),
        Err(error) => {
            let body = error.body();
            let field = |name: &str| body.pointer(&format!("/error/{name}")).and_then(Value::as_str).map(str::to_owned);
            let (code, message) =
                (field("code").unwrap_or_else(|| "error".into()), field("message").unwrap_or_default());
            Err(Failure::Refused(format!("{code}: {message}")))
        }
    }
}

/// The command's operation, called in-process as an organization
/// administrator: the path from `--workspace` and `--subject`, the other
/// flags as its arguments.
async fn call(store: &Store, org: &OrgId, parsed: &Parsed<'_>) -> Result<Value, ApiError> {
    let command = parsed.command;
    let value = |name: &str| parsed.values.get(name).cloned().unwrap_or_default();
    let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
    let subject = parsed.values.get("as").cloned().unwrap_or_else(|| format!("cli:{user}"));
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|_| ApiError::Unavailable)?;
    let services = Services {
        store: store.clone(),
        // Cursors of this process's lists only.
        secrets: Arc::new(Secrets::new(&[crate::domain::hex(&secret)])),
        webhook_allow_loopback: false,
        memberships: crate::api::tenancy::MembershipCache::new(std::time::Duration::ZERO),
    };
    let scopes = Scopes::from_names([Scope::OrgAdmin.as_str()]);
    let principal = Principal::new("cli".into(), subject, org.clone(), scopes);
    let tenant = Tenant::organization(org.clone());
    let request_id = crate::sys::new_id(crate::domain::ids::Kind::Event);
    let via = format!("admin {}", command.words.join(" "));
    let origin = Origin { request_id: &request_id, surface: Surface::Cli, client: None, via: Some(&via) };
    let ctx = services.ctx(&principal, &tenant, origin);
    let route = Route::new(command.op, value("workspace"), value("subject"));
    let mut args = Map::new();
    for name in command.flags.iter().chain(command.optional) {
        if let (false, Some(v)) = (["workspace", "subject"].contains(name), parsed.values.get(*name)) {
            let v = match *name {
                "limit" => v.parse::<u64>().map(Value::from).unwrap_or_else(|_| Value::from(v.as_str())),
                _ => Value::from(v.as_str()),
            };
            args.insert((*name).to_owned(), v);
        }
    }
    let response = api::invoke(&ctx, &Input::tool(&route, &args)).await?;
    Ok(response.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn commands_parse_their_flags_and_refuse_what_they_do_not_know() {
        let parsed = parse(&args("member set --org acme --workspace ws_1 --subject u1 --role admin")).ok().unwrap();
        assert_eq!(parsed.command.op, &org::MEMBER_SET);
        assert_eq!(parsed.values.get("role").map(String::as_str), Some("admin"));
        for (line, wanted) in [
            ("member set --org acme --workspace ws_1 --subject u1", "--role is required"),
            ("member set --org acme --colour red", "unknown flag --colour"),
            ("member promote --org acme", "unknown command: member promote"),
            ("member set --help", "usage: kobana-inbox-mcp admin member set"),
            ("workspace list --org", "--org needs a value"),
        ] {
            match parse(&args(line)) {
                Err(Failure::Usage(text)) => assert!(text.contains(wanted), "{line}: {text}"),
                _ => panic!("{line} parsed"),
            }
        }
    }

    #[test]
    fn every_command_calls_an_organization_operation_with_its_path_flags() {
        for c in COMMANDS {
            assert!(matches!(c.op.needs, crate::api::Needs::Org(_)), "{}", c.words.join(" "));
            assert_eq!(c.op.template.contains("{id}"), c.flags.contains(&"workspace"), "{}", c.words.join(" "));
            assert_eq!(c.op.template.contains("{sub}"), c.flags.contains(&"subject"), "{}", c.words.join(" "));
        }
    }
}
