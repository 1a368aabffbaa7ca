//! The `roster` fuzz target.

use responses_mcp_core::clients::{
    ClientId, Clients, Counts, Limit, Limits, NamedClient, LABELLED_IDENTITIES, OTHER_LABEL,
};
use responses_mcp_core::money::Picodollars;
use std::collections::BTreeMap;

/// Identities the small roster tells apart at once.
const ROOM: usize = 8;
/// Distinct names the script picks from: more than the labels, so some share `_OTHER`.
const NAMES: u8 = 48;
/// 2026-11-26 23:50:00 UTC: ten minutes before a day ends.
const START: u64 = 1_795_737_000;

/// What the script has made each name hold, and what it saw of it.
#[derive(Default)]
struct Model {
    /// Names marked as holding something (a request, a call, a task), with their id then.
    held: BTreeMap<String, ClientId>,
    /// Names that spent, with their id then.
    spent: BTreeMap<String, ClientId>,
    /// What forgotten names had used in their windows, as the ledger keeps it by name.
    kept: BTreeMap<String, Counts>,
    /// The label each name was first given.
    labels: BTreeMap<String, String>,
}

/// A script of two-byte operations on a roster of `ROOM` (8) identities beside one named
/// client: identify a name (making room as the server does when the roster is full),
/// mark a name as holding something or let it go, spend as a name under a spend-per-day
/// limit, let time pass (across minutes and the day's end), forget idle identities.
/// Checked after each: the roster never outgrows its room; no two live names share an
/// id, and an id names its own name; a name keeps its id while it holds something (the
/// script's marks); a forgotten id held nothing, and what its limits still read is kept
/// by its name until it returns; a name
/// is refused only when every live identity holds something; a name keeps the label it
/// was first given, and a label is never another name's; the named client's identity is
/// always the named client.
pub fn roster(data: &[u8]) {
    let named = NamedClient {
        name: "ci".into(),
        limit: Limit::default(),
        identity: Some("claimed".into()),
        gateway: false,
    };
    let Some(mut clients) = Clients::new(vec![named]) else {
        return;
    };
    let ci = clients.find("ci");
    clients.limit_identities(ROOM);
    let limit = Limit {
        calls_per_minute: Some(3),
        spend_per_day: Some(Picodollars(1_000)),
    };
    clients.set_identity_limit(limit);
    let mut limits = Limits::new(Limit::default());
    let mut model = Model::default();
    let mut now = START;
    for op in data.chunks_exact(2) {
        let name = format!("n{}", op[1] % NAMES);
        let full = format!("sub:{name}");
        match op[0] % 6 {
            0 => {
                identify(&mut clients, &mut limits, &mut model, (&name, now));
            }
            1 => {
                if let Some(id) = clients.known(&full) {
                    model.held.insert(full, id);
                }
            }
            2 => {
                model.held.remove(&full);
            }
            3 => {
                if let Some(id) = clients.known(&full) {
                    if limits
                        .admit(id, clients.limit(id), now, Picodollars(0))
                        .is_ok()
                    {
                        limits.spend(id, now, Picodollars(u64::from(op[1]) + 1));
                        model.spent.insert(full, id);
                    }
                }
            }
            4 => now += u64::from(op[1]) * 7,
            _ => {
                let held = holders(&clients, &limits, &model);
                let most = usize::from(op[1] % 8);
                forget(&mut clients, &mut limits, &mut model, (&held, most, now));
            }
        }
        check(&clients, &mut model);
        assert_eq!(clients.identify("sub", "claimed"), Some(ci));
    }
}

/// Identifies `name` as the server does: when the roster is full, a batch of idle
/// identities is forgotten first. A refusal only when every live identity holds
/// something.
fn identify(
    clients: &mut Clients,
    limits: &mut Limits,
    model: &mut Model,
    (name, now): (&str, u64),
) {
    if clients.is_full() {
        let held = holders(clients, limits, model);
        forget(clients, limits, model, (&held, 3, now));
    }
    if let Some(id) = clients.identify("sub", name) {
        // A returning identity takes back what it had used, as the ledger's admission does.
        if let Some(counts) = model.kept.remove(&format!("sub:{name}")) {
            limits.restore(id, counts);
        }
    } else {
        let held = holders(clients, limits, model);
        assert!(
            clients.identities().all(|id| held.contains(&id)),
            "{name} refused while some identity held nothing"
        );
        assert_eq!(clients.identity_count(), ROOM);
    }
}

/// The ids that hold something now: the script's marks, and calls in flight.
fn holders(clients: &Clients, limits: &Limits, model: &Model) -> Vec<ClientId> {
    let mut held: Vec<ClientId> = model.held.values().copied().collect();
    held.extend(clients.identities().filter(|id| limits.holds(*id)));
    held
}

/// Forgets at most `most` idle identities, as the server does: none held anything, their
/// counts are cleared from their ids and kept by their names while their limits read them.
fn forget(
    clients: &mut Clients,
    limits: &mut Limits,
    model: &mut Model,
    (held, most, now): (&[ClientId], usize, u64),
) {
    let limit = clients.identity_limit();
    let mut names = Vec::new();
    let gone = clients.forget_idle_telling(|id| held.contains(&id), most, &mut |id, name| {
        names.push((id, name.to_owned()));
    });
    assert_eq!(gone.len(), names.len());
    for (id, name) in names {
        assert!(
            !held.contains(&id),
            "{id:?} was forgotten while it held something"
        );
        if let Some(counts) = limits.forget(id, limit, now) {
            model.kept.insert(name, counts);
        }
    }
}

fn check(clients: &Clients, model: &mut Model) {
    assert!(clients.identity_count() <= ROOM);
    assert_eq!(clients.identities().count(), clients.identity_count());
    let mut ids = BTreeMap::new();
    for n in 0..NAMES {
        let full = format!("sub:n{n}");
        let Some(id) = clients.known(&full) else {
            continue;
        };
        assert!(clients.is_identity(id));
        assert_eq!(clients.name(id), full, "an id names its own name");
        if let Some(other) = ids.insert(id, full.clone()) {
            panic!("{other} and {full} share {id:?}");
        }
        let label = clients.label(id).to_owned();
        assert!(
            label == full || label == OTHER_LABEL,
            "{full} labelled {label}"
        );
        let first = model.labels.entry(full.clone()).or_insert(label.clone());
        assert_eq!(*first, label, "{full}'s label changed");
    }
    assert!(model.labels.values().filter(|l| *l != OTHER_LABEL).count() <= LABELLED_IDENTITIES);
    for (name, id) in &model.held {
        assert_eq!(
            clients.known(name),
            Some(*id),
            "{name} was forgotten while held"
        );
    }
    model
        .spent
        .retain(|name, _| clients.known(name).is_some() || model.kept.contains_key(name));
}
