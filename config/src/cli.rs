//! The command line, parsed with lexopt.

use std::ffi::OsString;
use std::path::PathBuf;

/// The help's text; [`usage`] fills `{providers}` from the provider table.
const USAGE: &str = "\
Usage: openai-responses-mcp [OPTIONS]
       openai-responses-mcp doctor [--live] [--json] [OPTIONS]

MCP server answering with the OpenAI Responses API and web search.

Commands:
  doctor                Check the configuration, the provider, the key, the network
                        path and every profile's model; exit 0 when a call can work
    --live              Also make one small real call per profile (costs tokens)
    --json              Print the report as JSON

Options:
  --stdio               Serve MCP over stdin/stdout
  --http                Serve MCP over Streamable HTTP at http://HOST:PORT/mcp
  --listen <addr>       Address for --http (default 127.0.0.1:8787; port 0 picks one)
  --show-config         Print the effective configuration and its sources to stderr
                        (exits unless --stdio is given too)
  --config <path>       YAML configuration file
  --provider <name>     The service's preset (openai.provider), one of
                        {providers}
  --base-url <url>      Responses API base URL (openai.base_url); a preset other
                        than openai ignores OPENAI_BASE_URL: set it here or in
                        the config file
  --model <id>          Override model_profiles.answer.model
  --debug [<path>]      Debug log to stderr, mirrored to <path> when given
  --log-format <fmt>    text (default) or json: JSON lines, one per finished call
  --metrics-listen <addr>  Also serve /metrics, /health and /ready at this address
  --help                Show this help
  --version             Show the version

The API key is read from the environment variable named by openai.api_key_env
(default OPENAI_API_KEY). Over HTTP, set MCP_HTTP_TOKEN to require a bearer token.
See docs/reference/config-reference.md.";

/// The column where the help's descriptions start.
const DESCRIPTION_COLUMN: usize = 24;
/// The width the provider list wraps at.
const WIDTH: usize = 80;

/// Usage text for `--help` and errors, naming every provider of the table.
pub fn usage() -> String {
    let names = crate::choices::Provider::NAMES;
    let indent = " ".repeat(DESCRIPTION_COLUMN);
    let mut list = String::new();
    let mut column = DESCRIPTION_COLUMN;
    for (i, name) in names.iter().enumerate() {
        let word = match names.len() - i {
            1 => (*name).to_owned(),
            2 => format!("{name} or"),
            _ => format!("{name},"),
        };
        if i > 0 && column + 1 + word.len() > WIDTH {
            list.push('\n');
            list.push_str(&indent);
            column = DESCRIPTION_COLUMN;
        } else if i > 0 {
            list.push(' ');
            column += 1;
        }
        column += word.len();
        list.push_str(&word);
    }
    USAGE.replace("{providers}", &list)
}

/// Parsed command-line arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cli {
    /// `--stdio`.
    pub stdio: bool,
    /// `--http`.
    pub http: bool,
    /// `--listen <addr>`.
    pub listen: Option<String>,
    /// `--show-config`.
    pub show_config: bool,
    /// `--config <path>`.
    pub config: Option<PathBuf>,
    /// `--model <id>`.
    pub model: Option<String>,
    /// `--provider <name>`.
    pub provider: Option<String>,
    /// `--base-url <url>`.
    pub base_url: Option<String>,
    /// The `doctor` command, with its flags.
    pub doctor: Option<DoctorFlags>,
    /// `--log-format <text|json>`.
    pub log_format: Option<String>,
    /// `--metrics-listen <addr>`.
    pub metrics_listen: Option<String>,
    /// `--debug` (`Some(None)`) or `--debug <path>` (`Some(Some(path))`).
    pub debug: Option<Option<PathBuf>>,
    /// `--help`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
}

/// The flags of `doctor`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DoctorFlags {
    /// `--live`: one real call per profile.
    pub live: bool,
    /// `--json`: the report as JSON.
    pub json: bool,
}

/// A command-line error; the binary prints it with [`usage`] and exits 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CliError(String);

/// The value of `--debug`: `--debug=path`, `--debug path`, or none for a bare `--debug`.
fn debug_path(parser: &mut lexopt::Parser) -> Result<Option<PathBuf>, lexopt::Error> {
    if let Some(v) = parser.optional_value() {
        return Ok(Some(v.into()));
    }
    let mut raw = parser.raw_args()?;
    Ok(match raw.peek().and_then(|a| a.to_str()) {
        Some(next) if !next.starts_with('-') => raw.next().map(PathBuf::from),
        _ => None,
    })
}

impl Cli {
    /// Parses arguments (without the program name).
    ///
    /// # Errors
    /// Unknown options, missing values and stray arguments.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, CliError> {
        use lexopt::prelude::*;
        let mut cli = Cli::default();
        let mut parser = lexopt::Parser::from_args(args);
        let err = |e: lexopt::Error| CliError(e.to_string());
        let (mut live, mut json) = (false, false);
        while let Some(arg) = parser.next().map_err(err)? {
            match arg {
                Long("stdio") => cli.stdio = true,
                Long("http") => cli.http = true,
                Long("listen") => {
                    let addr = parser.value().map_err(err)?.string().map_err(err)?;
                    cli.listen = Some(addr);
                }
                Long("show-config") => cli.show_config = true,
                Long("config") => cli.config = Some(parser.value().map_err(err)?.into()),
                Long("model") => {
                    let model = parser.value().map_err(err)?.string().map_err(err)?;
                    if model.trim().is_empty() {
                        return Err(CliError("--model needs a model id".into()));
                    }
                    cli.model = Some(model);
                }
                Long("provider") => {
                    let provider = parser.value().map_err(err)?.string().map_err(err)?;
                    cli.provider = Some(provider);
                }
                Long("base-url") => {
                    let url = parser.value().map_err(err)?.string().map_err(err)?;
                    if url.trim().is_empty() {
                        return Err(CliError(
                            "--base-url needs a URL such as https://gateway.example/v1".into(),
                        ));
                    }
                    cli.base_url = Some(url.trim().to_owned());
                }
                Long("metrics-listen") => {
                    let addr = parser.value().map_err(err)?.string().map_err(err)?;
                    cli.metrics_listen = Some(addr);
                }
                Long("log-format") => {
                    let format = parser.value().map_err(err)?.string().map_err(err)?;
                    cli.log_format = Some(format);
                }
                Long("live") => live = true,
                Long("json") => json = true,
                Value(v) if v == "doctor" && cli.doctor.is_none() => {
                    cli.doctor = Some(DoctorFlags::default());
                }
                Long("debug") => cli.debug = Some(debug_path(&mut parser).map_err(err)?),
                Short('h') | Long("help") => cli.help = true,
                Short('V') | Long("version") => cli.version = true,
                Value(v) => {
                    return Err(CliError(format!(
                        "unexpected argument {:?}",
                        v.to_string_lossy()
                    )))
                }
                other => return Err(err(other.unexpected())),
            }
        }
        cli.settle(live, json)?;
        Ok(cli)
    }

    /// Gives the doctor its flags and refuses combinations that mean nothing.
    fn settle(&mut self, live: bool, json: bool) -> Result<(), CliError> {
        match &mut self.doctor {
            Some(flags) => {
                *flags = DoctorFlags { live, json };
                if self.serves() || self.listen.is_some() {
                    return Err(CliError(
                        "doctor checks the setup and exits; run it without --stdio, --http or --listen".into(),
                    ));
                }
            }
            None if live || json => {
                return Err(CliError(
                    "--live and --json are flags of the doctor command: openai-responses-mcp doctor --live --json".into(),
                ))
            }
            None => {}
        }
        if self.stdio && self.http {
            return Err(CliError(
                "--stdio and --http: one transport per process; run one process for each".into(),
            ));
        }
        if self.listen.is_some() && !self.http {
            return Err(CliError(
                "--listen is the address for --http; add --http".into(),
            ));
        }
        Ok(())
    }

    /// Whether a transport was asked for.
    pub fn serves(&self) -> bool {
        self.stdio || self.http
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, CliError> {
        Cli::parse(args.iter().map(OsString::from))
    }

    #[test]
    fn all_flags_and_value_forms() {
        let cli = parse(&[
            "--stdio",
            "--show-config",
            "--config=/c.yaml",
            "--model",
            "gpt-5",
            "--debug",
            "/tmp/d.log",
        ])
        .unwrap();
        assert_eq!(
            cli,
            Cli {
                stdio: true,
                http: false,
                listen: None,
                show_config: true,
                config: Some("/c.yaml".into()),
                model: Some("gpt-5".into()),
                provider: None,
                base_url: None,
                log_format: None,
                metrics_listen: None,
                doctor: None,
                debug: Some(Some("/tmp/d.log".into())),
                help: false,
                version: false,
            }
        );
        assert_eq!(parse(&["--debug", "--stdio"]).unwrap().debug, Some(None));
        assert_eq!(parse(&["--debug=x"]).unwrap().debug, Some(Some("x".into())));
        assert_eq!(parse(&["--debug"]).unwrap().debug, Some(None));
        assert!(parse(&["--model=o3"]).unwrap().model.is_some());
        let http = parse(&["--http", "--listen", "[::1]:0"]).unwrap();
        assert!(http.http && http.serves());
        assert_eq!(http.listen.as_deref(), Some("[::1]:0"));
        let doctor = parse(&["doctor", "--json", "--provider", "ollama"]).unwrap();
        assert_eq!(
            doctor.doctor,
            Some(DoctorFlags {
                live: false,
                json: true
            })
        );
        assert_eq!(doctor.provider.as_deref(), Some("ollama"));
        let gateway = parse(&["--stdio", "--base-url=https://gw.example/v1"]).unwrap();
        assert_eq!(gateway.base_url.as_deref(), Some("https://gw.example/v1"));
        assert!(!doctor.serves());
    }

    #[test]
    fn the_help_names_every_provider_of_the_table_within_its_width() {
        let help = usage();
        let listed: String = help
            .lines()
            .skip_while(|l| !l.contains("--provider"))
            .skip(1)
            .take_while(|l| !l.trim_start().starts_with("--"))
            .collect::<Vec<_>>()
            .join(" ");
        let named: Vec<&str> = listed
            .split([' ', ','])
            .filter(|w| !w.is_empty() && *w != "or")
            .collect();
        assert_eq!(named, crate::choices::Provider::NAMES, "{help}");
        assert!(!help.contains("{providers}"));
        for line in help.lines() {
            assert!(line.len() <= 86, "{line:?}");
        }
    }

    #[test]
    fn errors() {
        for args in [
            &["--bogus"][..],
            &["--config"],
            &["stray"],
            &["--model", ""],
            &["--stdio=1"],
            &["--stdio", "--http"],
            &["--listen", "127.0.0.1:1"],
            &["--http", "--listen"],
            &["--live"],
            &["--stdio", "--json"],
            &["doctor", "--stdio"],
            &["doctor", "doctor"],
            &["--provider"],
            &["--base-url"],
            &["--base-url", " "],
        ] {
            assert!(parse(args).is_err(), "{args:?}");
        }
        assert!(parse(&["--bogus"])
            .unwrap_err()
            .to_string()
            .contains("--bogus"));
    }
}
