//! Why the configuration cannot be used.

/// Why the configuration cannot be used. Startup stops with this message.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The YAML text does not parse.
    #[error("{path}:{line}:{column}: invalid YAML: {message}")]
    Yaml {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The YAML file could not be read.
    #[error("{path}: cannot read the configuration file: {message}")]
    Unreadable {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// A value has the wrong type or is out of range.
    #[error("{key} = {value} ({origin}) is invalid: expected {allowed}")]
    Invalid {
        /// The dotted key, or the environment variable.
        key: String,
        /// The value as given.
        value: String,
        /// Where it came from.
        origin: String,
        /// What is allowed.
        allowed: String,
    },
    /// The clients file could not be read or is not a valid list of clients.
    #[error("server.http.clients_file {path}: {message}")]
    ClientsFile {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The CA file could not be read or holds no certificate.
    #[error("openai.ca_file {path}: {message}")]
    CaFile {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// `--http` on an address other machines can reach, with no token to require.
    #[error("{setting} = {listen} is reachable from other machines and no bearer token is set: set the {token_env} environment variable to a long random secret (clients send it as Authorization: Bearer <token>), or set server.http.allow_unauthenticated: true if something in front of the server authenticates clients")]
    Unauthenticated {
        /// The setting that gave the address, as the operator set it: the key, and the
        /// flag when the command line set it (`--metrics-listen (server.metrics_listen)`).
        setting: String,
        /// The address.
        listen: String,
        /// The variable that would hold the token.
        token_env: String,
    },
    /// Provider azure without a resource to build the base URL from.
    #[error("openai.provider is azure but the Azure resource is not known: {why}. Set openai.azure_resource to the NAME in https://NAME.openai.azure.com, or the AZURE_OPENAI_ENDPOINT environment variable to that https:// endpoint, or openai.base_url to the full URL (…/openai/v1)")]
    AzureResource {
        /// What was set, and why it was not taken.
        why: String,
    },
    /// The policy file could not be read.
    #[error("policy.system.path {path}: cannot read the policy file: {message}")]
    PolicyFile {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// The trace variables (`OTEL_*`) cannot be read.
    #[error(transparent)]
    Traces(#[from] crate::traces::TraceError),
    /// OpenAI's host would receive a key that is another service's.
    #[error("{why}, and the requests go to {host} (openai.base_url {url}, from {url_source}): OpenAI would receive a key that is not its own. {advice}; if this key really is meant for OpenAI's host, set openai.allow_foreign_key: true")]
    ForeignKey {
        /// What says the key is another service's (never the key beyond its public
        /// prefix).
        why: String,
        /// OpenAI's host, as the base URL names it.
        host: String,
        /// The base URL's origin.
        url: String,
        /// Where the base URL came from.
        url_source: String,
        /// How to send the key to its service.
        advice: String,
    },
    /// A setting asks the provider for something its API does not offer.
    #[error("{setting} is {value}, but {service}'s Responses API has no {feature}: {advice}")]
    NotOffered {
        /// The setting.
        setting: &'static str,
        /// Its value.
        value: String,
        /// The service.
        service: &'static str,
        /// What it lacks.
        feature: &'static str,
        /// What to do.
        advice: &'static str,
    },
    /// A shared store without the secret that seals task ids alike on every instance.
    #[error("server.store.url is set but the {variable} environment variable is not: every instance sharing the store must seal task ids with the same secret, or a task made on one instance is refused by the others. Set {variable} to the same long random secret on every instance (for example `openssl rand -hex 32`), or name another variable in tasks.secret_env")]
    StoreWithoutTaskSecret {
        /// The variable `tasks.secret_env` names.
        variable: String,
    },
    /// No secret, and the system's random source gave nothing to seal task ids with.
    #[error("the system's random source gave no bytes for the key that seals task ids, and the {variable} environment variable is not set: set {variable} to a long random secret (for example `openssl rand -hex 32`), or name another variable in tasks.secret_env")]
    NoTaskKey {
        /// The variable `tasks.secret_env` names.
        variable: String,
    },
}
