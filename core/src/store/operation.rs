//! A store operation as the core asks it (`StoreOp`), named for its owner (`StoreId`,
//! `StoreTag`), and how it went (`StoreReply`).

/// One operation's name, for its answer: whose it is (minted with the operation, so that
/// the answer goes straight to its owner) and its number among that owner's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreId {
    /// Whose operation it is.
    pub tag: StoreTag,
    /// Its number, unique among its owner's.
    pub n: u64,
}

/// Whose a store operation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StoreTag {
    /// A call's reserve under the limits: the ledger's, and the call parked on it.
    Limit,
    /// A background end's claim: the ledger's.
    Claim,
    /// Spend and release: nobody waits on their answers but the store's health.
    Count,
    /// A task's operation or an event: the shared tasks'.
    Task,
}

/// What the runtime asks the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreOp {
    /// Checks every limit on a call and, when none is reached, counts it in its minute
    /// and holds its estimate in its day: [`RESERVE_SCRIPT`](super::RESERVE_SCRIPT) with
    /// `keys` and `args`, atomically.
    Reserve {
        /// The client's calls, the service's calls, the client's spend, the service's,
        /// the client's held today, the service's, the client's held yesterday, the
        /// service's.
        keys: [String; 8],
        /// The limit on each of the first four keys (`-1`: none), the calls keys' time to
        /// live, the estimate to hold (picodollars), the held keys' time to live.
        args: [i64; 7],
        /// The hold's name: its holder and number.
        hold: super::HoldName,
    },
    /// Lets go of a call's held estimate: [`UNHOLD_SCRIPT`](super::UNHOLD_SCRIPT).
    Unhold {
        /// The client's held, the service's.
        keys: [String; 2],
        /// The hold's name, as its reserve gave it.
        hold: super::HoldName,
    },
    /// Adds a call's estimated cost to its client's and the service's spend of the day:
    /// `INCRBY` and `EXPIRE` on each key.
    Spend {
        /// The client's spend, the service's.
        keys: [String; 2],
        /// Picodollars.
        amount: i64,
        /// The keys' time to live, seconds.
        ttl_secs: i64,
    },
    /// Gives back a call counted by a reserve that never reached OpenAI: `DECR` on each key
    /// that is above zero.
    Release {
        /// The client's calls, the service's.
        keys: [String; 2],
    },
    /// Runs `script` (one of the [`tasks`](super::tasks) scripts) with `keys` and `args`; it answers
    /// rows of strings ([`StoreReply::Rows`]).
    Script {
        /// The Lua text.
        script: &'static str,
        /// Its keys.
        keys: Vec<String>,
        /// Its arguments.
        args: Vec<String>,
    },
    /// Publishes `message` on `channel` ([`events`](super::events)).
    Publish {
        /// The channel.
        channel: String,
        /// One event.
        message: String,
    },
}

impl StoreOp {
    /// Whose an operation of this kind is, when the ledger sends it.
    pub fn ledger_tag(&self) -> StoreTag {
        match self {
            StoreOp::Reserve { .. } => StoreTag::Limit,
            _ => StoreTag::Count,
        }
    }
}

/// How an operation went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreReply {
    /// The script's answer to a reserve: `0` reserved, else the 1-based number of the
    /// limit reached and what its key holds.
    Reserve {
        /// Which limit (0: none).
        reached: i64,
        /// The count or spend of that key.
        value: i64,
        /// For a spend limit, what the day's calls in flight hold.
        held: i64,
    },
    /// A spend, release, unhold, put or publish was done.
    Done,
    /// A script's answer: rows of strings, read by [`tasks`](super::tasks).
    Rows(Vec<Vec<String>>),
    /// The store could not be reached or refused the operation: why (without secrets).
    Unavailable(String),
}
