use super::*;
use serde_json::json;

/// The fields a put writes, as the store would answer them.
fn rows(op: &StoreOp) -> Vec<String> {
    match op {
        StoreOp::Script { script, args, .. } if *script == PUT_SCRIPT => args[5..].to_vec(),
        other => panic!("not a put: {other:?}"),
    }
}

#[test]
fn a_put_task_reads_back_as_it_was_written() {
    let op = put(
        "task-1",
        ("ci", "00000000000000aa"),
        1_700_000_000,
        Duration::from_secs(600),
        Duration::from_secs(86_400),
    );
    let read = read(&[vec!["ok".into()], rows(&op)]).unwrap().unwrap();
    assert_eq!(read.id, "task-1");
    assert_eq!(read.owner, "ci");
    assert_eq!(read.status, Status::Working);
    assert_eq!(read.ttl, Duration::from_secs(600));
    assert_eq!(read.ends(), 1_700_000_600);
    assert_eq!((read.message, read.outcome), (None, None));
    let StoreOp::Script { keys, args, .. } = op else {
        unreachable!()
    };
    assert_eq!(
        keys,
        ["orm:t:task-1", "orm:tl:ci", "orm:lease:00000000000000aa"]
    );
    assert!(!read.orphaned);
    assert_eq!(
        args[..5],
        ["task-1", "600000", "1700000000", "1699913600", "86460"]
    );
}

#[test]
fn an_outcome_keeps_its_text_and_an_error_its_fields() {
    let ok = Outcome::new(Ok(
        json!({"content": [], "n": 1.0e300, "big": 18446744073709551615u64}),
    ));
    assert_eq!(Outcome::from_stored(&ok.stored()), Some(ok.clone()));
    let error = crate::jsonrpc::RpcError {
        code: -32603,
        message: "upstream failed".into(),
        data: Some(json!({"retry": true})),
    };
    let failed = Outcome::new(Err(error.clone()));
    assert_eq!(
        Outcome::from_stored(&failed.stored()).unwrap().get(),
        Err(error)
    );
    for bad in [
        "",
        "{}",
        r#"{"result":1,"error":{"code":1,"message":""}}"#,
        "[1]",
    ] {
        assert_eq!(Outcome::from_stored(bad), None, "{bad}");
    }
}

#[test]
fn answers_the_scripts_never_give_are_errors_not_tasks() {
    let good = rows(&put(
        "t",
        ("c", "h"),
        1,
        Duration::from_secs(1),
        Duration::from_secs(9),
    ));
    let without = |name: &str| {
        let mut flat = good.clone();
        let i = flat.iter().position(|f| f == name).unwrap();
        flat.drain(i..i + 2);
        flat
    };
    for name in ["id", "owner", "created", "ttl_ms", "status"] {
        assert!(read(&[vec!["ok".into()], without(name)]).is_err(), "{name}");
    }
    let mut odd = good.clone();
    odd.push("dangling".into());
    assert!(read(&[vec!["ok".into()], odd]).is_err());
    assert!(read(&[]).is_err());
    assert!(read(&[vec!["what".into()]]).is_err());
    assert_eq!(read(&[vec!["none".into()]]), Ok(None));
    assert!(finished(&[]).is_err());
    assert_eq!(finished(&[vec!["lost".into()]]), Ok(Finished::Lost));
    assert_eq!(page(&[vec!["bad-cursor".into()]]), Ok(None));
    let listed = page(&[vec!["ok".into(), "t".into()], good.clone()]).unwrap();
    assert_eq!(
        listed.map(|(t, next)| (t.len(), next)),
        Some((1, Some("t".into())))
    );
    let cancel = cancelled(&[vec!["ok".into(), "changed".into()], good]).unwrap();
    assert!(matches!(cancel, Cancelled::Task(_, true)));
    assert_eq!(cancelled(&[vec!["foreign".into()]]), Ok(Cancelled::Foreign));
    assert_eq!(cancelled(&[vec!["none".into()]]), Ok(Cancelled::Missing));
    assert!(cancelled(&[vec!["maybe".into()]]).is_err());
    assert_eq!(
        written(&[vec!["ok".into()]]),
        Ok(Written::Put { held: true })
    );
    let lapsed = vec!["ok".into(), "lapsed".into()];
    assert_eq!(written(&[lapsed]), Ok(Written::Put { held: false }));
    assert_eq!(written(&[vec!["taken".into()]]), Ok(Written::Taken));
    assert!(written(&[]).is_err());
}

#[test]
fn a_cancel_names_its_owner_to_the_script_and_in_its_event() {
    let op = cancel(
        "task-9",
        "email:a b@example.com",
        5,
        "cancelled by the client",
    );
    let StoreOp::Script { script, keys, args } = op else {
        unreachable!()
    };
    assert_eq!(script, CANCEL_SCRIPT);
    assert_eq!(keys, ["orm:t:task-9"]);
    assert_eq!(args[4], "email:a b@example.com");
    assert_eq!(
        crate::store::events::StoreEvent::parse(&args[3]),
        Some(crate::store::events::StoreEvent::Cancel {
            task_id: "task-9".into(),
            owner: "email:a b@example.com".into(),
        })
    );
}

#[test]
fn a_put_names_its_holder_and_takes_its_lease_for_a_lapse() {
    let op = put(
        "t",
        ("c", "00000000000000aa"),
        1,
        Duration::from_secs(1),
        Duration::from_secs(9),
    );
    assert!(rows(&op)
        .windows(2)
        .any(|f| f == ["holder", "00000000000000aa"]));
    let lapse = format!("'PX', {})", lease::LAPSE.as_millis());
    assert!(PUT_SCRIPT.contains(&lapse), "{PUT_SCRIPT}");
    assert!(
        lease::RENEW_SCRIPT.contains(&lapse),
        "{}",
        lease::RENEW_SCRIPT
    );
    // Three renewals in a lapse, and a dead holder's tasks end within 30 s.
    assert!(lease::RENEW * 3 <= lease::LAPSE);
    assert!(lease::LAPSE + Duration::from_secs(2) < Duration::from_secs(30));
    assert_eq!(lease::holder(0xab), "00000000000000ab");
}

#[test]
fn a_read_ends_an_orphan_with_the_stopped_error_and_says_so() {
    let StoreOp::Script { script, keys, args } = get("task-3", 77) else {
        unreachable!()
    };
    assert_eq!(script, READ_SCRIPT);
    assert_eq!(keys, ["orm:t:task-3"]);
    let [prefix, at, message, outcome, channel, event] = args.as_slice() else {
        panic!("{args:?}");
    };
    assert_eq!((prefix.as_str(), at.as_str()), ("orm:lease:", "77"));
    assert!(message.contains("call the tool again"), "{message}");
    let stopped = Outcome::from_stored(outcome).unwrap().get().unwrap_err();
    assert_eq!(&stopped.message, message);
    assert_eq!(channel, crate::store::events::CHANNEL);
    assert_eq!(
        crate::store::events::StoreEvent::parse(&format!("{event}task-3")),
        Some(crate::store::events::StoreEvent::Ended("task-3".into()))
    );
    // The list ends its page's orphans with the same arguments, after its own.
    let StoreOp::Script {
        script,
        args: listed,
        ..
    } = list("c", None, 50, 77)
    else {
        unreachable!()
    };
    assert_eq!(script, LIST_SCRIPT);
    assert_eq!(listed[4..], args[..]);
    // What the script answers: the fields, then `orphaned 1`.
    let mut fields = rows(&put(
        "task-3",
        ("c", "h"),
        1,
        Duration::from_secs(60),
        Duration::from_secs(90),
    ));
    for (name, value) in [("status", "failed"), ("outcome", outcome.as_str())] {
        fields.extend([name.to_owned(), value.to_owned()]);
    }
    fields.extend(["orphaned".to_owned(), "1".to_owned()]);
    let task = read(&[vec!["ok".into()], fields]).unwrap().unwrap();
    assert!(task.orphaned);
    assert_eq!(task.status, Status::Failed);
}

#[test]
fn a_renewal_says_whether_the_lease_had_lapsed() {
    let StoreOp::Script { script, keys, args } = lease::renew("00000000000000aa") else {
        unreachable!()
    };
    assert_eq!(script, lease::RENEW_SCRIPT);
    assert_eq!(keys, ["orm:lease:00000000000000aa"]);
    assert!(args.is_empty());
    assert_eq!(lease::renewed(&[vec!["held".into()]]), Ok(true));
    assert_eq!(lease::renewed(&[vec!["lapsed".into()]]), Ok(false));
    assert!(lease::renewed(&[]).is_err());
    assert!(lease::renewed(&[vec!["ok".into()]]).is_err());
}
