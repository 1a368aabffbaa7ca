//! Method names, parsed once into enums so that dispatch matches on types, not strings.

/// A request method.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// `initialize`.
    Initialize,
    /// `ping`.
    Ping,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// `server/discover` (2026-07-28).
    ServerDiscover,
    /// `subscriptions/listen` (2026-07-28).
    SubscriptionsListen,
    /// `tasks/get`.
    TasksGet,
    /// `tasks/result` (2025-11-25).
    TasksResult,
    /// `tasks/list` (2025-11-25).
    TasksList,
    /// `tasks/cancel`.
    TasksCancel,
    /// `tasks/update` (the 2026-07-28 extension).
    TasksUpdate,
    /// Anything else, kept for the "method not found" message.
    Other(String),
}

impl Method {
    /// Parses a method name.
    pub fn parse(name: &str) -> Method {
        match name {
            "initialize" => Method::Initialize,
            "ping" => Method::Ping,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "server/discover" => Method::ServerDiscover,
            "subscriptions/listen" => Method::SubscriptionsListen,
            "tasks/get" => Method::TasksGet,
            "tasks/result" => Method::TasksResult,
            "tasks/list" => Method::TasksList,
            "tasks/cancel" => Method::TasksCancel,
            "tasks/update" => Method::TasksUpdate,
            other => Method::Other(other.to_owned()),
        }
    }

    /// The name as a metrics label: the method's, or `_OTHER` for any other (a client
    /// can send any name; labels must stay few).
    pub fn label(&self) -> &'static str {
        match self {
            Method::Other(_) => crate::metrics::OTHER,
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ServerDiscover => "server/discover",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::TasksGet => "tasks/get",
            Method::TasksResult => "tasks/result",
            Method::TasksList => "tasks/list",
            Method::TasksCancel => "tasks/cancel",
            Method::TasksUpdate => "tasks/update",
        }
    }

    /// The method name.
    pub fn as_str(&self) -> &str {
        match self {
            Method::Other(name) => name,
            known => known.label(),
        }
    }
}

/// A notification method.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotificationMethod {
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled`.
    Cancelled,
    /// Anything else; ignored.
    Other(String),
}

impl NotificationMethod {
    /// Parses a notification method name.
    pub fn parse(name: &str) -> NotificationMethod {
        match name {
            "notifications/initialized" => NotificationMethod::Initialized,
            "notifications/cancelled" => NotificationMethod::Cancelled,
            other => NotificationMethod::Other(other.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "initialize",
            "ping",
            "tools/list",
            "tools/call",
            "server/discover",
            "subscriptions/listen",
            "x/y",
        ] {
            assert_eq!(Method::parse(name).as_str(), name);
        }
        assert_eq!(Method::parse("Ping"), Method::Other("Ping".into()));
    }
}
