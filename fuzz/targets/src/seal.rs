//! The `seal` fuzz target.

use responses_mcp_core::tasks::{BackgroundRef, Owner, TaskKey, TaskSettings, TaskStore};
use responses_mcp_core::tools::ALL_TOOLS;

/// Background task ids under arbitrary client names, response ids and ids: an id sealed
/// for one client opens for that client alone (never for another name, however long or
/// alike), opens to what was sealed, and is refused under another key; any string given
/// as an id either does not open or opens to a reference that seals back to exactly it.
pub fn seal(data: &[u8]) {
    let store = |key: u8| {
        TaskStore::<()>::new(TaskSettings {
            key: TaskKey([key; 32]),
            ..TaskSettings::default()
        })
    };
    let (ours, theirs) = (store(7), store(8));
    // The input's 0xff-separated pieces: two client names, a response id, and a string
    // offered as an id.
    let mut pieces = data.split(|b| *b == 0xff).map(String::from_utf8_lossy);
    let client = pieces.next().unwrap_or_default().into_owned();
    let other = pieces.next().unwrap_or_default().into_owned();
    let response = pieces.next().unwrap_or_default().into_owned();
    let offered = pieces.next().unwrap_or_default().into_owned();
    let numbers: Vec<u64> = data
        .chunks(8)
        .map(|c| c.iter().fold(0u64, |n, b| n << 8 | u64::from(*b)))
        .collect();
    let reference = BackgroundRef {
        response_id: if response.is_empty() {
            "resp_1".into()
        } else {
            response.chars().take(128).collect()
        },
        created: numbers.first().copied().unwrap_or(0),
        ttl_ms: numbers.get(1).copied().unwrap_or(0),
        tool: ALL_TOOLS[usize::from(data.first().copied().unwrap_or(0)) % ALL_TOOLS.len()],
        owner: Owner::named(&client),
    };
    let id = ours.seal_background(&reference);
    if reference.response_id.len() <= 128 {
        let opened = ours.open_background(&id);
        assert_eq!(opened.as_ref().ok(), Some(&reference), "{id}");
        if let Ok(opened) = opened {
            assert!(opened.client_may_see(&client));
            assert_eq!(opened.client_may_see(&other), other == client, "{other:?}");
        }
        assert!(theirs.open_background(&id).is_err());
    }
    for text in [offered.as_str(), id.as_str()] {
        if let Ok(found) = ours.open_background(text) {
            // Only ids the seal made open: the old formats reseal to another prefix, so
            // compare the new format alone.
            if text.starts_with("task-d") {
                assert_eq!(ours.seal_background(&found), text);
            }
        }
    }
}
