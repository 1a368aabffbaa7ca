//! The server state machine: bytes and events in, actions out.
//!
//! ```text
//!   runtime                                    Server
//!   ───────                                    ──────
//!   stdin bytes ─────── handle(now, Stdin) ──▶ framer ─▶ JSON-RPC ─▶ dispatch
//!   HTTP reply/failure ─ handle(now, Http*) ─▶ call engine (retries, backoff, answer)
//!   timer fired ─────── handle(now, Timeout) ▶ call engine deadlines, shutdown grace
//!                         poll_output() ◀──── Write(frame) | Http(request) | Abort(attempt) | Exit
//!                         poll_timeout() ◀─── next deadline
//! ```
//!
//! The runtime drains `poll_output` after every `handle`, performs each action, then
//! re-arms its single timer from `poll_timeout`. Completions for attempts that were
//! aborted are normal and ignored. [`crate::Driver`] does this bookkeeping for a host.

mod batch;
mod closing;
mod desk;
mod dispatch;
mod exchanges;
pub mod io;
mod listen;
mod lookups;
mod methods;
mod oauth;
mod outbox;
mod parked;
mod register;
mod requests;
mod roster;
mod route;
mod store;
mod subscriptions;
mod traced;
mod user_ids;

use crate::io::{after, ExchangeId, Now};
use crate::mcp::shape::RequestError;
use crate::oauth::Gate;
use crate::serve::exchange::ExchangeOut;
use crate::settings::ServerConfig;
pub use io::{Input, Output};

use crate::calls::{CallEngine, Settings};
use crate::framing::Framer;
use crate::jsonrpc::Reply;
use crate::mcp::ProtocolVersion;
use crate::routing::{Context, ReplyTo};
use closing::Closing;
use std::collections::BTreeMap;
use std::time::Instant;
use subscriptions::Subscriptions;

/// Where the session is in the MCP lifecycle.
///
/// ```text
///  AwaitingInit ──initialize──▶ Ready(version)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Session {
    AwaitingInit,
    Ready(ProtocolVersion),
}

/// The MCP server. See the module docs for the driving loop.
pub struct Server {
    config: ServerConfig,
    framer: Framer,
    session: Session,
    calls: CallEngine<Context>,
    /// What waits to be sent: see [`outbox`].
    out: outbox::Outbox,
    stdin_closed: bool,
    /// Why no new call is taken and the server exits once the calls in flight end.
    closing: Option<Closing>,
    /// Set once `Output::Exit` has been queued; all later input is ignored.
    exited: bool,
    /// When the server exits at the latest once closing: the end of the shutdown grace.
    grace_deadline: Option<Instant>,
    /// When calls still running are stopped: the grace's end, less the store's share
    /// ([`STORE_SHARE`]) when tasks' ends must be written there.
    calls_cut: Option<Instant>,
    /// The serialised `tools/list` result per version (at its index), built on first use.
    tools_list_json: [Option<Vec<u8>>; ProtocolVersion::ALL.len()],
    /// Open `subscriptions/listen` requests (2026-07-28).
    subscriptions: Subscriptions,
    /// A modern request arrived: before any legacy session, errors without a readable id
    /// leave `id` out, as the modern schema wants.
    modern_seen: bool,
    /// Every task, whichever backend keeps it: see [`crate::desk`].
    desk: crate::desk::Desk,
    /// How calls' ends are worded (the key's variable, debug details).
    wording: crate::mcp::failure::Wording,
    /// The time of the latest input, for what happens between inputs.
    last_now: Option<Now>,
    /// What the provider said of the profiles' models' shutdown dates.
    calendar: crate::openai::calendar::Calendar,
    /// Metrics, limits, spend and the call records: see [`crate::ledger`].
    ledger: crate::ledger::Ledger,
    /// The clients: the named ones and the identities seen, numbered on first sight
    /// (the one roster names are read from, so that an id means the same everywhere).
    clients: crate::clients::Clients,
    /// Calls waiting for the shared store's reserve, by its operation.
    parked: BTreeMap<crate::store::StoreId, parked::CallRequest>,
    /// OAuth mode: the gate that verifies bearer tokens, and the requests it holds, each
    /// its exchange alone (its body is still in the client's socket).
    gate: Option<Gate<ExchangeId>>,
    /// The spans made of the work, for the host to export ([`crate::spans`]).
    tracer: crate::spans::Tracer,
    /// The requests not yet answered: see [`register`].
    register: register::Register,
    /// How the HTTP request being dispatched came in (its address and credential),
    /// while `on_exchange` runs: what a call started for it records.
    arriving: crate::ledger::Arrival,
    /// What OpenAI is told of each caller seen (`safety_identifier`, `prompt_cache_key`).
    user_ids: user_ids::Known,
    /// The stdio session's `clientInfo`, from its `initialize`.
    session_app: Option<serde_json::Value>,
    /// OAuth requests verified as a client, their bodies still read: see [`roster`].
    verifying: roster::Verifying,
    /// The roster is full of identities that hold something (since it was last looked
    /// at, then): new ones are refused, and `/ready` says so.
    roster_full: Option<Instant>,
    /// When the roster was last scanned and found few identities to forget.
    roster_scanned: Option<Instant>,
}

impl Server {
    /// A server waiting for its first message.
    pub fn new(config: ServerConfig) -> Self {
        let ledger = crate::ledger::Ledger::new(&config);
        let clients = config.roster();
        let gate = (config.oauth.as_ref()).map(|o| Gate::new(o.settings.clone(), (o.verifier)()));
        // Task numbers start at a random point of a 63-bit space (drawn from the runtime's
        // seed, which is the system's random source): instances sharing a store and a key,
        // started in the same second as PID 1 each, still seal different ids. Two
        // instances' runs of numbers meet only with a chance of about n²·k/2⁶³ for n
        // instances of k tasks each; a put that would meet an existing task is refused by
        // the store all the same. Every use of the seed draws its own value from it
        // (`sha256::derive`): none of them shows the seed or another.
        let seed = config.jitter_seed;
        let first_task = (crate::sha256::derive(seed, b"task numbers") >> 1).max(1);
        let desk = crate::desk::Desk::new(&config, first_task);
        let wording = crate::mcp::failure::Wording::new(&config);
        let tracer =
            crate::spans::Tracer::new(config.traces, crate::sha256::derive(seed, b"trace ids"));
        Server {
            framer: Framer::new(config.max_message_bytes),
            out: outbox::Outbox::new(config.force_line_output),
            calls: CallEngine::new(
                Settings::from_config(&config),
                crate::sha256::derive(seed, b"retry jitter"),
            ),
            config,
            session: Session::AwaitingInit,
            stdin_closed: false,
            closing: None,
            exited: false,
            grace_deadline: None,
            calls_cut: None,
            tools_list_json: Default::default(),
            subscriptions: Subscriptions::default(),
            modern_seen: false,
            desk,
            wording,
            last_now: None,
            calendar: crate::openai::calendar::Calendar::default(),
            ledger,
            clients,
            parked: BTreeMap::new(),
            gate,
            tracer,
            register: register::Register::default(),
            arriving: crate::ledger::Arrival::default(),
            user_ids: user_ids::Known::default(),
            session_app: None,
            verifying: roster::Verifying::default(),
            roster_full: None,
            roster_scanned: None,
        }
    }

    /// Feeds one event.
    pub fn handle(&mut self, now: Now, input: Input<'_>) {
        if self.exited {
            return;
        }
        self.last_now = Some(now);
        // The gate's deadlines once due, on whatever input comes first: a host flooded
        // with requests may not get to its timer (its first fetch comes with `Start`).
        if let Some(gate) = &mut self.gate {
            if gate.poll_timeout().is_some_and(|at| at <= now.instant) {
                gate.timeout(now);
                self.drain_gate(now);
            }
        }
        match input {
            Input::Start => {
                if let Some(gate) = &mut self.gate {
                    gate.start(now);
                }
                self.drain_gate(now);
            }
            Input::Stdin(bytes) => {
                if !self.stdin_closed {
                    self.framer.push(bytes);
                    self.read_frames(now);
                }
            }
            Input::StdinClosed => {
                if !self.stdin_closed {
                    self.framer.finish();
                    self.read_frames(now);
                    self.stdin_closed = true;
                    self.close(now, Closing::StdinClosed);
                    log::debug!("stdin closed; {} call(s) in flight", self.calls.len());
                }
            }
            Input::Drain => {
                self.close(now, Closing::Draining);
                log::debug!("draining; {} call(s) in flight", self.calls.len());
            }
            Input::HttpReply(attempt, reply) => self.calls.handle_reply(now, attempt, reply),
            Input::HttpHead(attempt, head) => self.calls.handle_head(now, attempt, head),
            Input::HttpBody(attempt, bytes) => self.calls.handle_body(now, attempt, bytes),
            Input::HttpEnd(attempt) => self.calls.handle_end(now, attempt),
            Input::HttpFailed(attempt, error) => self.calls.handle_failure(now, attempt, error),
            Input::Timeout => self.on_timeout(now),
            Input::Shutdown => {
                self.desk.stopping();
                self.calls.abort_all(None);
                self.drain_calls();
                self.close_subscriptions();
                self.exit();
            }
            Input::OutputClosed => {
                self.calls.abort_all(None);
                self.drain_calls();
                self.exit();
            }
            Input::Exchange { id, asked } => self.on_asked(now, id, asked),
            Input::ExchangeClosed(id) => self.on_exchange_closed(now, id),
            Input::StoreReply { id, reply, took } => self.on_store_reply(now, id, reply, took),
            Input::StoreHealth(up) => self.ledger.store_health(up),
            Input::SpansDropped(n) => self.tracer.lost_by_host(n),
            Input::StoreEvent(message) => self.on_store_event(now, message),
            Input::StoreSubscribed => {
                self.desk.on_store(now, crate::desk::FromStore::Subscribed);
                self.drain_desk();
            }
        }
        // After the input's own replies, so that the first reply never waits for them.
        if !self.exited && self.closing.is_none() {
            self.look_up_models(now);
        }
        self.drain_calls();
        // Holds in the store stand while this instance says it is alive.
        if !self.exited {
            self.ledger.keep_alive(now);
        }
        self.exit_when_done(now);
        // A roster full of holders is looked at again once something may have let go.
        if self.roster_full.is_some() {
            self.keep_room(now);
        }
    }

    /// Closing, exits once nothing holds it: answers and creates hold the exit, and so do
    /// tasks' ends until the store has them (at most until the grace ends); lookups and
    /// task reads do not.
    fn exit_when_done(&mut self, now: Now) {
        let flush_over = self.grace_deadline.is_some_and(|d| now.instant >= d);
        let owed = self.desk.holds_exit();
        if self.closing.is_some()
            && self.calls.is_empty()
            && self.parked.is_empty()
            && (!owed || flush_over)
        {
            if owed {
                log::warn!("exiting at the end of the shutdown grace before the shared store acknowledged every task's end: other instances end those tasks as failed once this one's lease lapses");
            }
            self.exit();
        }
    }

    /// Takes no new calls from now on; those in flight get the shutdown grace.
    fn close(&mut self, now: Now, why: Closing) {
        if self.closing.is_none() {
            self.closing = Some(why);
            // Nothing more can be asked on them: they end now, gracefully.
            self.close_subscriptions();
            let grace = self.config.shutdown_grace;
            let end = after(now.instant, grace);
            self.grace_deadline = Some(end);
            self.calls_cut = Some(closing::calls_cut(end, grace, self.config.store.is_some()));
        }
    }

    /// What `/health` and `/ready` report.
    pub fn health(&self) -> crate::serve::endpoint::Health {
        let queued = self.calls.queued();
        crate::serve::endpoint::Health {
            running: self.calls.len() - queued,
            queued,
            draining: self.closing.is_some(),
            key_missing: !self.config.credentials_ready,
            full: self.calls.is_full(),
            store_down: self.ledger.store_down(),
            identity_down: self.gate.as_ref().is_some_and(|g| g.not_ready().is_some()),
            identity_degraded: self.gate.as_ref().is_some_and(|g| g.degraded().is_some()),
            identities_full: self.roster_full.is_some(),
            starting: false,
        }
    }

    /// The Prometheus text of `/metrics`: the counters, and the gauges as of now.
    pub(crate) fn metrics_text(&self) -> Vec<u8> {
        let (attempts, retries) = self.calls.attempt_counts();
        let health = self.health();
        let gauges = crate::metrics::Gauges {
            running: health.running,
            queued: health.queued,
            tasks: self.desk.count_by_status(),
            attempts: attempts.clone(),
            retries,
            identity: self.gate.as_ref().map(|g| {
                (
                    g.not_ready().is_none(),
                    g.degraded().is_none() && g.not_ready().is_none(),
                )
            }),
            ready: health.refusal().is_none(),
            now: self.latest_unix(),
            spans_dropped: self.tracer.is_on().then(|| self.tracer.dropped()),
            store_up: self.config.store.map(|_| !health.store_down),
            identities: (self.config.identity_header.is_some() || self.gate.is_some())
                .then(|| self.clients.identity_count()),
            spend_limits: Vec::new(),
        };
        self.ledger.render(&self.clients, gauges)
    }

    /// The next action, or `None` when there is nothing to do.
    #[must_use]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out
            .pop()
            .or_else(|| self.ledger.poll_record().map(Output::Record))
            .or_else(|| self.tracer.poll().map(Output::Span))
            .or_else(|| {
                let (id, op) = self.ledger.poll_store_op()?;
                Some(Output::Store(id, op))
            })
            .or_else(|| {
                let (id, op) = self.desk.poll_op()?;
                Some(Output::Store(id, op))
            })
    }

    /// When to call `handle(now, Input::Timeout)` next.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.exited {
            return None;
        }
        let cut = self.calls_cut.filter(|_| !self.calls.is_empty());
        // The grace's end bounds a wait for the store's acknowledgements.
        let grace = self.grace_deadline.filter(|_| self.desk.holds_exit());
        [
            self.calls.poll_timeout(),
            cut,
            grace,
            self.desk.poll_timeout(),
            self.ledger.poll_timeout(),
            self.gate.as_ref().and_then(|g| g.poll_timeout()),
            self.roster_recheck(),
            // No lookups start once the server is closing: their time must not wake it.
            self.calendar
                .poll_timeout()
                .filter(|_| self.closing.is_none()),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether the server has asked to exit.
    pub fn is_exited(&self) -> bool {
        self.exited
    }

    /// Tasks held in the store, working or finished.
    pub fn task_count(&self) -> usize {
        self.desk.len()
    }

    /// Number of calls in flight or queued.
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// The negotiated protocol version, once initialized.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        match self.session {
            Session::Ready(v) => Some(v),
            Session::AwaitingInit => None,
        }
    }

    fn read_frames(&mut self, now: Now) {
        loop {
            let (framing, parsed) = match self.framer.next_frame() {
                None => break,
                Some(Ok(frame)) => (
                    frame.framing,
                    Ok(serde_json::from_slice::<serde_json::Value>(frame.bytes)),
                ),
                Some(Err(e)) => (e.framing(), Err(e)),
            };
            self.out.framing_seen(framing);
            match parsed {
                Ok(Ok(value)) => self.on_message(now, value),
                Ok(Err(e)) => {
                    let cause = &e.to_string();
                    let error = RequestError::Parse { cause }.error();
                    self.route(
                        ReplyTo::Direct,
                        Some(Reply::Failure { id: None, error }),
                        None,
                    );
                }
                Err(e) => {
                    log::debug!("framing error: {e}");
                    let error = RequestError::Frame(&e).error();
                    self.route(
                        ReplyTo::Direct,
                        Some(Reply::Failure { id: None, error }),
                        None,
                    );
                }
            }
        }
    }

    fn on_timeout(&mut self, now: Now) {
        let cut = self.calls_cut.is_some_and(|at| now.instant >= at);
        if cut && !self.calls.is_empty() {
            log::debug!("grace period over; aborting {} call(s)", self.calls.len());
            let why = self.closing.unwrap_or(Closing::StdinClosed).reason();
            // Their tasks fail, telling their clients to call again.
            self.desk.stopping();
            self.calls
                .abort_all(Some(crate::openai::UpstreamFailure::shutdown(why)));
            return;
        }
        self.desk.on_timeout(now);
        self.drain_desk();
        self.calls.handle_timeout(now);
    }

    /// The wall-clock time of the latest input, Unix seconds (for what is drained after
    /// it).
    pub(super) fn latest_unix(&self) -> u64 {
        self.last_now.map_or(0, |n| n.unix_secs)
    }

    fn exit(&mut self) {
        if !self.exited {
            // Nobody is left waiting on this instance.
            self.desk.exiting();
            self.drain_desk();
            self.exited = true;
            self.out.push(Output::Exit);
        }
    }
}

#[cfg(test)]
mod tests;
