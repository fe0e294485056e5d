//! The binary's command line (`inbox::cli`, clap's derive): every command of this build, at
//! every level, answers `--help` with its usage on stdout (exit 0, nothing on stderr) in an
//! empty environment, and that usage documents each of its flags and arguments. The list
//! of commands is clap's own (`inbox::cli::command`), so a command added later is asked too.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_kobana-inbox-mcp");

/// How a usage names an argument: `--flag`, or `<VALUE>` for a positional one.
fn shown(arg: &clap::Arg) -> String {
    match arg.get_long() {
        Some(long) => format!("--{long}"),
        None => {
            let name = arg.get_value_names().and_then(|names| names.first()).map(ToString::to_string);
            format!("<{}>", name.unwrap_or_else(|| arg.get_id().to_string().to_uppercase()))
        }
    }
}

#[test]
fn every_command_answers_help_with_a_usage_that_documents_each_flag_and_argument() {
    let mut pending = vec![(Vec::<String>::new(), inbox::cli::command())];
    let mut asked = Vec::new();
    while let Some((words, command)) = pending.pop() {
        let out = Command::new(BIN).args(&words).arg("--help").env_clear().output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{words:?} --help: {stderr}");
        assert!(stderr.is_empty(), "{words:?} --help: {stderr}");
        let usage = ["Usage: kobana-inbox-mcp"].into_iter().chain(words.iter().map(String::as_str)).collect::<Vec<_>>();
        assert!(stdout.contains(&usage.join(" ")), "{words:?} --help: {stdout}");
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            let name = shown(arg);
            let help = arg.get_long_help().or(arg.get_help()).map(ToString::to_string).unwrap_or_default();
            assert!(!help.trim().is_empty(), "{words:?}: {name} has no help text");
            assert!(stdout.contains(&name) && stdout.contains(help.trim()), "{words:?} --help, {name}: {stdout}");
        }
        for sub in command.get_subcommands() {
            let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
            assert!(!about.trim().is_empty(), "{words:?} {}: says nothing of what it does", sub.get_name());
            if !sub.is_hide_set() {
                assert!(stdout.contains(&about), "{words:?} --help lists {}: {stdout}", sub.get_name());
            }
            let mut deeper = words.clone();
            deeper.push(sub.get_name().to_owned());
            pending.push((deeper, sub.clone()));
        }
        asked.push(words.join(" "));
    }
    // The top level, serve, admin, openapi, version; admin's 5 groups and 16 commands; the
    // 6 development commands and snapshot's 2.
    assert_eq!(asked.len(), 1 + 4 + 5 + 16 + 6 + 2, "{asked:?}");
    for expected in ["", "admin", "admin member set", "admin workspace shards", "invoke", "snapshot restore"] {
        assert!(asked.iter().any(|a| a == expected), "{expected:?} asked: {asked:?}");
    }
}

/// What clap adds to every command: `help` (a command, and `-h`, `--help`) answers too,
/// on stdout, with the usage of the command it is asked about.
#[test]
fn help_as_a_command_and_as_a_short_flag_answers_like_help() {
    for (args, usage) in [
        (&["help"][..], "Usage: kobana-inbox-mcp [COMMAND]"),
        (&["-h"], "Usage: kobana-inbox-mcp [COMMAND]"),
        (&["help", "snapshot", "save"], "Usage: kobana-inbox-mcp snapshot save <FILE>"),
        (&["admin", "help", "member", "set"], "Usage: kobana-inbox-mcp admin member set [OPTIONS] --org <ORG>"),
        (&["admin", "member", "set", "-h"], "Usage: kobana-inbox-mcp admin member set [OPTIONS] --org <ORG>"),
    ] {
        let out = Command::new(BIN).args(args).env_clear().output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains(usage), "{args:?}: {stdout}");
    }
    // A wrong command line is not help: exit 2, the error and the usage on stderr.
    let out = Command::new(BIN).args(["frobnicate"]).env_clear().output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty() && stderr.contains("unrecognized subcommand 'frobnicate'"), "{stderr}");
    assert!(stderr.contains("Usage: kobana-inbox-mcp [COMMAND]"), "{stderr}");
    let out = Command::new(BIN).args(["invoke"]).env_clear().output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a missing argument before any configuration: {stderr}");
    assert!(stderr.contains("<EVENT.JSON>"), "{stderr}");
}
