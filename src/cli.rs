//! `kobana-inbox-mcp admin …`: the organization administration of a
//! deployed stack from a shell, for its first administrator and for
//! scripts. It reads the table named by `TABLE_NAME` with the standard AWS
//! credential chain (`AWS_PROFILE`, `AWS_REGION`, …) and calls the same
//! operations as the `/api/v1/org` routes (`crate::api::org`), audited with
//! surface `cli` and the subject `--as` names (default `cli:$USER`).
//!
//! `--dry-run` writes nothing, ever: it runs the operation against a dry-run
//! store (`Store::dry_run`, whose client refuses every call that is not a
//! read), prints the items the real run would write, and answers what the
//! real run would (its refusals included: the operations read every
//! condition first). A call that would change nothing says so.
//!
//! `admin workspace shards` is the operator's: it raises a workspace's write
//! shards (`crate::domain::shards`; docs/operations.md, "Raising a
//! workspace's write shards") through an operation no route or token
//! reaches (`org::WORKSPACE_SHARDS`) — what a workspace costs to list is the
//! operator's decision, not its administrator's — and is audited like the
//! others. It has no `--dry-run`: its two updates are the store's
//! (`Store::set_write_shards`), not a described transaction.
//!
//! The command line is strict, since its values end up in the audit trail:
//! a flag's value never starts with `--` (`--name --dry-run` is a missing
//! name, not a name), and no value holds a control character, a line or
//! paragraph separator or an invisible formatting character (`--as` with a
//! newline would forge a line of the trail's readers).
//!
//! Exit codes: 0 done (and `--help`, `-h` or `help` asked for: usage on
//! stdout); 2 the command line is wrong (usage on stderr); 3 the operation
//! refused (its error code and message on stderr: not found, last admin,
//! slug taken, invalid value); 4 the table could not be reached or the
//! configuration is wrong.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::api::audit::Origin;
use crate::api::error::ApiError;
use crate::api::{self, Input, Op, Param, Route, Services, org};
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
        words: &["workspace", "shards"],
        about: "Raise a workspace's write shards (operators: docs/capacity.md)",
        op: &org::WORKSPACE_SHARDS,
        flags: &["workspace", "count"],
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

/// Every command whose words begin with `prefix` (all of them for none).
fn usage_of(prefix: &[&str]) -> String {
    let mut text = String::from("usage: kobana-inbox-mcp admin <command> [flags]\n\ncommands:\n");
    for c in COMMANDS.iter().filter(|c| c.words.starts_with(prefix)) {
        text.push_str(&format!("  {:<22} {}\n", c.words.join(" "), c.about));
    }
    text.push_str(&format!("\n{GLOBAL}\nEach command takes --help.\n"));
    text
}

fn usage() -> String {
    usage_of(&[])
}

/// Flags whose value is a whole number.
const NUMBERS: &[&str] = &["limit", "count"];

/// What a command's usage says besides its flags.
fn details(c: &Command) -> String {
    if c.op == &org::WORKSPACE_SHARDS {
        format!(
            " The count only grows (1 to {}); lists read the new shards at once, records are written to them \
             {} s later. No --dry-run.",
            crate::domain::shards::MAX_SHARDS,
            crate::domain::Shards::WRITE_DELAY_SECS
        )
    } else {
        String::new()
    }
}

fn command_usage(c: &Command) -> String {
    let mut flags: Vec<String> = vec!["--org ORG".into()];
    flags.extend(c.flags.iter().map(|f| format!("--{f} {}", f.to_uppercase())));
    flags.extend(c.optional.iter().map(|f| format!("[--{f} {}]", f.to_uppercase())));
    let (words, about, more) = (c.words.join(" "), c.about, details(c));
    format!("usage: kobana-inbox-mcp admin {words} {}\n\n{about}.{more}\n\n{GLOBAL}\n", flags.join(" "))
}

/// How a run ended other than done: help asked for, or what went wrong,
/// and the exit code that says so.
enum Failure {
    /// `--help` (or `-h`, `help`) asked for: success, the usage on stdout.
    Help(String),
    Usage(String),
    Refused(String),
    Unavailable(String),
}

impl Failure {
    fn exit(self) -> ExitCode {
        let (code, message) = match self {
            Failure::Help(text) => {
                return match crate::sys::print_stdout(&text) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("cannot write the usage: {e}");
                        ExitCode::FAILURE
                    }
                };
            }
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

/// Whether `arg` asks for help.
fn is_help(arg: &str) -> bool {
    matches!(arg, "--help" | "-h")
}

/// Whether a value may reach the table and the trail: none of the
/// characters the API refuses in its callers' text (`domain::text`: controls
/// such as a newline or an escape, line and paragraph separators, bidi and
/// zero-width characters, tags) that would make it read as something else.
fn printable(value: &str) -> bool {
    crate::domain::text::first_hidden(value).is_none()
}

fn parse(args: &[String]) -> Result<Parsed<'static>, Failure> {
    let words: Vec<&str> = args.iter().map(String::as_str).take_while(|a| !a.starts_with('-')).collect();
    let rest: Vec<&str> = args.iter().map(String::as_str).skip(words.len()).collect();
    let help = rest.iter().any(|a| is_help(a)) || words == ["help"];
    let command = COMMANDS.iter().find(|c| c.words == words.as_slice());
    let Some(command) = command else {
        return Err(match words.as_slice() {
            [] | ["help"] if help => Failure::Help(usage()),
            [] => Failure::Usage(usage()),
            // A group (`admin workspace --help`): its commands.
            prefix if help && COMMANDS.iter().any(|c| c.words.starts_with(prefix)) => Failure::Help(usage_of(prefix)),
            _ => Failure::Usage(format!("unknown command: {}\n\n{}", words.join(" "), usage())),
        });
    };
    if help {
        return Err(Failure::Help(command_usage(command)));
    }
    let wrong = |message: String| Failure::Usage(format!("{message}\n\n{}", command_usage(command)));
    let mut values = BTreeMap::new();
    let mut dry_run = false;
    let mut flags = rest.into_iter();
    while let Some(flag) = flags.next() {
        let name = flag.trim_start_matches("--");
        if flag == "--dry-run" {
            if command.op == &org::WORKSPACE_SHARDS {
                return Err(wrong("workspace shards has no --dry-run".into()));
            }
            dry_run = true;
            continue;
        }
        let known = ["org", "as"].contains(&name) || command.flags.contains(&name) || command.optional.contains(&name);
        if !known || !flag.starts_with("--") {
            return Err(wrong(format!("unknown flag {flag}")));
        }
        // A value never starts with `--`: `--name --dry-run` lacks its name.
        let Some(value) = flags.next().filter(|v| !v.starts_with("--")) else {
            return Err(wrong(format!("{flag} needs a value (values do not start with --)")));
        };
        if !printable(value) {
            return Err(wrong(format!(
                "{flag} must not contain control characters, line separators or invisible formatting characters"
            )));
        }
        if NUMBERS.contains(&name) && value.parse::<u64>().is_err() {
            return Err(wrong(format!("{flag} must be a whole number")));
        }
        if values.insert(name.to_owned(), value.to_owned()).is_some() {
            return Err(wrong(format!("{flag} is given twice")));
        }
    }
    for required in std::iter::once(&"org").chain(command.flags) {
        if !values.contains_key(*required) {
            return Err(wrong(format!("--{required} is required")));
        }
    }
    Ok(Parsed { command, values, dry_run })
}

/// Who the audit trail names: `--as`, or `cli:$USER`; a token subject (1 to
/// 255 characters) that `printable` accepts.
fn acting_subject(parsed: &Parsed<'_>) -> Result<String, Failure> {
    let subject = match parsed.values.get("as") {
        Some(named) => named.clone(),
        None => format!("cli:{}", std::env::var("USER").unwrap_or_else(|_| "unknown".into())),
    };
    if subject.is_empty() || subject.len() > 255 || !printable(&subject) {
        return Err(Failure::Usage(format!(
            "--as must be 1 to 255 characters without control or invisible characters (default cli:$USER)\n\n{}",
            command_usage(parsed.command)
        )));
    }
    Ok(subject)
}

/// Runs `admin <args>`; the exit code says how it ended (module docs).
pub async fn run(args: &[String]) -> ExitCode {
    match execute(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit(),
    }
}

/// The command's answer on standard output (`sys::print_stdout`: a closed pipe is no failure).
fn print(text: &str) -> Result<(), Failure> {
    crate::sys::print_stdout(text).map_err(|e| Failure::Unavailable(format!("cannot write the answer: {e}")))
}

async fn execute(args: &[String]) -> Result<(), Failure> {
    let parsed = parse(args)?;
    let subject = acting_subject(&parsed)?;
    let org = parsed.values.get("org").map(String::as_str).unwrap_or_default();
    let org =
        OrgId::parse(org).ok_or_else(|| Failure::Usage("--org must be 1 to 64 letters, digits, _ or -".into()))?;
    let config = crate::config::store_from_env().map_err(|e| Failure::Unavailable(e.to_string()))?;
    let store = Store::connect(&config).await;
    let store = if parsed.dry_run { store.dry_run() } else { store };
    let answer = call(&store, &org, &subject, &parsed).await;
    if parsed.dry_run {
        let mut text = String::from(match (&answer, store.described_a_change()) {
            (_, true) => "dry run: nothing was written; the change would write:",
            (Ok(_), false) => {
                "dry run: nothing was written; nothing would change (the real run writes the call's audit record only):"
            }
            (Err(_), false) => {
                "dry run: nothing was written; the real run would be refused (and write the call's audit record only):"
            }
        });
        text.push('\n');
        for line in store.described_writes() {
            text.push_str(&format!("  {line}\n"));
        }
        print(&text)?;
    }
    match answer {
        Ok(body) => print(&format!("{}\n", serde_json::to_string_pretty(&body).unwrap_or_else(|_| body.to_string()))),
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
async fn call(store: &Store, org: &OrgId, subject: &str, parsed: &Parsed<'_>) -> Result<Value, ApiError> {
    let command = parsed.command;
    let value = |name: &str| parsed.values.get(name).cloned().unwrap_or_default();
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
    let principal = Principal::new("cli".into(), subject.to_owned(), org.clone(), scopes);
    let tenant = Tenant::organization(org.clone());
    let request_id = crate::sys::new_id(crate::domain::ids::Kind::Event);
    let via = format!("admin {}", command.words.join(" "));
    let origin = Origin { request_id: &request_id, surface: Surface::Cli, client: None, via: Some(&via) };
    let ctx = services.ctx(&principal, &tenant, origin);
    // The path flags: `--workspace` is the `{id}`, `--subject` the `{sub}`
    // (a command has each flag exactly where its operation has the parameter).
    let mut route = Route::new(command.op);
    for (param, flag) in [(Param::Id, "workspace"), (Param::Sub, "subject")] {
        if let Some(slot) = route.param_mut(param) {
            *slot = value(flag);
        }
    }
    let mut args = Map::new();
    for name in command.flags.iter().chain(command.optional) {
        if let (false, Some(v)) = (["workspace", "subject"].contains(name), parsed.values.get(*name)) {
            let v = match v.parse::<u64>() {
                Ok(number) if NUMBERS.contains(name) => Value::from(number),
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
            ("workspace list --org", "--org needs a value"),
            ("workspace rename --org acme --workspace ws_1 --name --dry-run", "--name needs a value"),
            ("workspace list --org acme --as --dry-run", "--as needs a value"),
            ("workspace list --org acme --limit ten", "--limit must be a whole number"),
            ("workspace shards --org acme --workspace ws_1 --count 4 --dry-run", "no --dry-run"),
            ("workspace", "unknown command: workspace"),
        ] {
            match parse(&args(line)) {
                Err(Failure::Usage(text)) => assert!(text.contains(wanted), "{line}: {text}"),
                _ => panic!("{line} parsed"),
            }
        }
    }

    #[test]
    fn help_asked_for_at_any_level_is_an_answer_not_an_error() {
        for (line, wanted, unwanted) in [
            ("--help", "workspace shards", ""),
            ("-h", "member set", ""),
            ("help", "org-admin add", ""),
            ("workspace --help", "workspace rename", "member set"),
            ("member set --help", "usage: kobana-inbox-mcp admin member set --org ORG", ""),
            ("member set --org acme --role --help", "usage: kobana-inbox-mcp admin member set", ""),
            ("workspace shards -h", "The count only grows", ""),
        ] {
            match parse(&args(line)) {
                Err(Failure::Help(text)) => {
                    assert!(text.contains(wanted), "{line}: {text}");
                    assert!(unwanted.is_empty() || !text.contains(unwanted), "{line}: {text}");
                }
                _ => panic!("{line}: not help"),
            }
        }
        assert!(
            matches!(parse(&args("frobnicate --help")), Err(Failure::Usage(_))),
            "an unknown command stays an error"
        );
        assert!(matches!(parse(&[]), Err(Failure::Usage(_))), "no command is a usage error");
    }

    #[test]
    fn values_with_control_or_invisible_characters_are_refused() {
        for value in ["ops\nforged line", "ops\r", "ops\u{1b}[2J", "ops\u{2028}", "ops\u{202e}", "ops\u{200b}"] {
            let mut line = args("workspace list --org acme --as");
            line.push(value.to_owned());
            match parse(&line) {
                Err(Failure::Usage(text)) => assert!(text.contains("must not contain control characters"), "{text}"),
                _ => panic!("{value:?} accepted"),
            }
        }
        let parsed = parse(&args("workspace list --org acme --as ops@example")).ok().unwrap();
        assert_eq!(acting_subject(&parsed).ok().as_deref(), Some("ops@example"));
    }

    #[test]
    fn every_command_calls_an_organization_operation_with_its_path_flags() {
        for c in COMMANDS {
            assert!(matches!(c.op.needs, crate::api::Needs::Org(_)), "{}", c.words.join(" "));
            assert_eq!(c.op.template.declares(Param::Id), c.flags.contains(&"workspace"), "{}", c.words.join(" "));
            assert_eq!(c.op.template.declares(Param::Sub), c.flags.contains(&"subject"), "{}", c.words.join(" "));
            assert!(!c.op.template.declares(Param::Sender), "{}", c.words.join(" "));
        }
    }
}
