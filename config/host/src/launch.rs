//! What a binary does first: parse the command line, read the configuration (installing
//! the logger between its two steps), and handle the options that do not serve.

use crate::process::{now, system_random};
use crate::{doctor, logging};
use responses_mcp_config::load::{self, Process};
use responses_mcp_config::{paths, show, usage, Cli, ConfigError, Env, Startup, VERSION};
use std::ffi::OsString;
use std::io::Write;

/// What the binary should do after [`launch`].
#[derive(Debug)]
pub enum Launch {
    /// Exit with this status; everything has been printed.
    Exit(i32),
    /// Serve over stdio, or HTTP when [`Startup::http`] is set.
    Serve(Box<Startup>),
    /// Run `doctor`: the runtime gives it an HTTP client and exits with its status.
    Doctor(Box<doctor::Doctor>),
}

/// Parses the command line, resolves the configuration, sets up logging and handles the
/// options that do not serve. `seed` is entropy for retry jitter. `args` is a `Vec`, not
/// any iterator, so that this cold code is built once here (at `opt-level = "z"`), not in
/// each binary at its per-call level.
pub fn launch(args: Vec<OsString>, env: Env, seed: u64) -> Launch {
    let cli = match Cli::parse(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "openai-responses-mcp: {e}\n\n{}",
                usage()
            );
            return Launch::Exit(2);
        }
    };
    if cli.version {
        let _ = writeln!(std::io::stdout(), "openai-responses-mcp {VERSION}");
        return Launch::Exit(0);
    }
    if let Some(flags) = cli.doctor {
        let config_file =
            paths::config_path(&cli, &env, cfg!(windows)).map(|p| (p.clone(), p.is_file()));
        let loaded = load(cli, &env, seed).map(Box::new);
        return Launch::Doctor(Box::new(doctor::Doctor::new(flags, loaded, config_file)));
    }
    if cli.help || (!cli.serves() && !cli.show_config) {
        let _ = writeln!(std::io::stdout(), "{}", usage());
        return Launch::Exit(0);
    }
    let startup = match load(cli, &env, seed) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "openai-responses-mcp: {e}");
            return Launch::Exit(1);
        }
    };
    if startup.cli.show_config || startup.resolved.show_config_on_start() {
        let secrets = show::SecretsSet {
            api_key: startup.api_key.is_some(),
            ..show::SecretsSet::of(&startup.resolved, &env)
        };
        let text = show::show_config(&startup.resolved, secrets, &startup.proxy);
        let _ = writeln!(std::io::stderr(), "{text}");
        if !startup.cli.serves() {
            return Launch::Exit(0);
        }
    }
    Launch::Serve(Box::new(startup))
}

/// Reads the configuration, installs the logger it asks for, and reads the rest.
fn load(cli: Cli, env: &Env, seed: u64) -> Result<Startup, ConfigError> {
    let read = load::read(cli, env)?;
    let resolved = &read.resolved;
    let json = resolved.json_logs();
    if let Err(e) = logging::init(resolved.debug(), resolved.debug_file().as_deref(), json) {
        let _ = writeln!(std::io::stderr(), "openai-responses-mcp: {e}");
    }
    read.startup(Process {
        env,
        seed,
        unix_secs: now().unix_secs,
        call_records: logging::call_log_enabled(),
        random: system_random,
    })
}
