//! The static (musl) builds against the glibc builds of the same commit: the process's
//! own CPU time (user + system, from `wait4`) for sequential streamed calls, measured
//! from outside as a host would see it. Callgrind counts instructions and misses what
//! the allocator costs in system calls and page faults, which is where musl differs.
//!
//! `BENCH_ONLY=builds`; the static binaries are read from `BENCH_STATIC_DIR`
//! (default `target/x86_64-unknown-linux-musl/release`, as `packaging/verify.sh` builds them).

use super::*;

const CALLS: u64 = 200;
const RUNS: usize = 5;

pub fn run() {
    let static_dir = std::env::var_os("BENCH_STATIC_DIR").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/x86_64-unknown-linux-musl/release")
        },
        PathBuf::from,
    );
    let stream = fixture("stream-web-search.sse");
    let upstreams = [
        ("whole chunks of 16 KiB", 16 * 1024),
        ("one small chunk per write (256 B)", 256),
    ];
    println!("## CPU per streamed call, static (musl) against glibc builds\n");
    println!(
        "User + system CPU of the server process for `initialize` + {CALLS} sequential streamed \
         calls (the 87 KB web-search answer), median of {RUNS} runs per build, per call.\n"
    );
    println!("| binary | upstream | glibc (baseline) | static | ratio |");
    println!("|---|---|---|---|---|");
    for (upstream, size) in upstreams {
        let body = stream.clone();
        let fake = FakeOpenAi::start(move |_, _| Action::stream(&body, size, Duration::ZERO));
        for (name, glibc) in binaries() {
            let musl = static_dir.join(glibc.file_name().unwrap());
            if !musl.exists() {
                println!(
                    "| {name} | {upstream} | - | {} missing | - |",
                    musl.display()
                );
                continue;
            }
            // Interleaved runs, so a busy moment of the machine lands on both builds.
            let (mut base, mut this) = (Vec::new(), Vec::new());
            for _ in 0..RUNS {
                base.push(cpu_of_calls(&glibc, &fake.url));
                this.push(cpu_of_calls(&musl, &fake.url));
            }
            let median = |xs| percentile(&sorted(xs), 0.5);
            let (base, this) = (median(base), median(this));
            println!(
                "| {name} | {upstream} | {:.3} ms | {:.3} ms | {:.2} |",
                base / CALLS as f64,
                this / CALLS as f64,
                this / base
            );
        }
    }
    println!();
}

/// Milliseconds of CPU (user + system) the server spent serving `initialize` and
/// [`CALLS`] streamed calls one after another, until it exited on end of input.
fn cpu_of_calls(bin: &Path, base_url: &str) -> f64 {
    let dir = std::env::temp_dir().join(format!("orm-builds-{}", rand_suffix()));
    let mut command = Command::new(bin);
    serve_args(&mut command, &dir, base_url, "responses: {stream: true}\n");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut send_and_wait = |request: &str, id: u64| {
        writeln!(stdin, "{request}").unwrap();
        // Progress notifications come first; the reply to `id` ends the call.
        let id_field = format!("\"id\":{id},");
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "the server exited"
            );
            if line.contains(&id_field) {
                break;
            }
        }
    };
    send_and_wait(INIT, 0);
    for id in 1..=CALLS {
        send_and_wait(&call(id), id);
    }
    // End of input: the server finishes and exits; reap it here to read its usage.
    drop(stdin);
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet reaped; both pointers are to live locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4 failed");
    std::mem::forget(child); // reaped above: std must not wait for it again
    let _ = std::fs::remove_dir_all(&dir);
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}
