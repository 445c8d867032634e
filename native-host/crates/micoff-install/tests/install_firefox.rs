//! `micoff-host install` for Firefox in temp dirs: micoff's add-on per profile (`--firefox-xpi`
//! without `--system`) and by policy (`--system`), the release prefs, what is refused and what is
//! left alone; and the readers under them (zip entries, a Firefox build's signing rule and
//! defaults).

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

mod support;

use support::{executable, install as run};

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use micoff_install::firefox::build::{builds_of, Build};
use micoff_install::zip;
use micoff_install::{Browser, InstallArgs, InstallEnv};
use micoff_native::FIREFOX_EXTENSION_ID;
use serde_json::{json, Value};

const USER_JS: &str = "user_pref(\"browser.startup.page\", 3);\n// my own comment\n";
const SIGNATURES: &str = "xpinstall.signatures.required";
const AUTO_DISABLE: &str = "extensions.autoDisableScopes";
const STARTUP_SCAN: &str = "extensions.startupScanScopes";
const RELEASE: &str = "media.getusermedia.microphone.off_while_disabled.enabled";
const DELAY: &str = "media.getusermedia.microphone.off_while_disabled.delay_ms";

fn xpi(id: &str, version: &str) -> Vec<u8> {
    let manifest = format!(
        r#"{{"manifest_version": 3, "name": "micoff", "version": "{version}", "browser_specific_settings": {{"gecko": {{"id": "{id}"}}}}}}"#
    );
    support::zip(
        &[
            ("background.js", b"// code".as_slice()),
            ("manifest.json", manifest.as_bytes()),
        ],
        true,
    )
}

/// A Firefox installation under `root`: `dir` (e.g. `usr/lib/firefox-esr`) with its executable,
/// its `omni.ja` saying whether it requires signing, its channel and `autoDisableScopes` default.
fn firefox_build(
    root: &Path,
    dir: &str,
    signing: bool,
    channel: &str,
    auto_disable: u32,
) -> PathBuf {
    let d = root.join(dir);
    let name = Path::new(dir).file_name().unwrap().to_owned();
    executable(&d.join(&name));
    let constants = format!(
        "export var AppConstants = Object.freeze({{\n  MOZ_REQUIRE_SIGNING: {signing},\n}});\n"
    );
    std::fs::write(
        d.join("omni.ja"),
        support::zip(
            &[("modules/AppConstants.sys.mjs", constants.as_bytes())],
            true,
        ),
    )
    .unwrap();
    std::fs::create_dir_all(d.join("browser")).unwrap();
    let prefs =
        format!("pref(\"{AUTO_DISABLE}\", {auto_disable});\npref(\"{STARTUP_SCAN}\", 0);\n");
    std::fs::write(
        d.join("browser/omni.ja"),
        support::zip(
            &[("defaults/preferences/firefox.js", prefs.as_bytes())],
            false,
        ),
    )
    .unwrap();
    std::fs::create_dir_all(d.join("defaults/pref")).unwrap();
    std::fs::write(
        d.join("defaults/pref/channel-prefs.js"),
        format!("pref(\"app.update.channel\", \"{channel}\");\n"),
    )
    .unwrap();
    d
}

struct Machine {
    _tmp: tempfile::TempDir,
    env: InstallEnv,
    profile: PathBuf,
    xpi: PathBuf,
}

/// A user with one Firefox profile (listed in profiles.ini, holding the user's own user.js), a
/// Firefox ESR like Debian's (autoDisableScopes 3), and micoff's packaged xpi.
fn machine() -> Machine {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    firefox_build(&root, "usr/lib/firefox-esr", false, "esr", 3);
    let home = tmp.path().join("home");
    let profile = home.join(".mozilla/firefox/abc.default-esr");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(
        home.join(".mozilla/firefox/profiles.ini"),
        "[Profile0]\nName=default-esr\nIsRelative=1\nPath=abc.default-esr\n\n[General]\nVersion=2\n",
    )
    .unwrap();
    std::fs::write(profile.join("user.js"), USER_JS).unwrap();
    let xpi_path = tmp.path().join("dist/micoff-0.1.0.xpi");
    std::fs::create_dir_all(xpi_path.parent().unwrap()).unwrap();
    std::fs::write(&xpi_path, xpi(FIREFOX_EXTENSION_ID, "0.1.0")).unwrap();
    let env = InstallEnv {
        home,
        config_home: None,
        root,
        path_dirs: vec![bin],
        flatpak_apps: vec![],
        data_home: None,
        state_home: None,
    };
    Machine {
        _tmp: tmp,
        env,
        profile,
        xpi: xpi_path,
    }
}

fn args(xpi: Option<&Path>) -> InstallArgs {
    InstallArgs {
        browsers: vec![Browser::Firefox],
        firefox_xpi: Some(xpi.map(Path::to_path_buf)),
        ..support::install_args()
    }
}

fn uninstall(mut a: InstallArgs) -> InstallArgs {
    a.uninstall = true;
    a.firefox_xpi = a.firefox_xpi.map(|_| None);
    a
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn copy_of(profile: &Path) -> PathBuf {
    profile
        .join("extensions")
        .join(format!("{FIREFOX_EXTENSION_ID}.xpi"))
}

/// Every file under `dir` with its content (what "nothing changed" is checked against).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn zip_entries_are_read_from_memory_and_from_files() {
    for deflate in [true, false] {
        let z = support::zip(
            &[
                ("a.txt", b"first".as_slice()),
                ("dir/b.js", b"second".as_slice()),
            ],
            deflate,
        );
        assert_eq!(
            zip::entry(z.as_slice(), "dir/b.js", 100).unwrap().unwrap(),
            b"second"
        );
        assert_eq!(zip::entry(z.as_slice(), "c", 100).unwrap(), None);
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), &z).unwrap();
        let file = zip::FileSource::open(tmp.path()).unwrap();
        assert_eq!(zip::entry(&file, "a.txt", 100).unwrap().unwrap(), b"first");
        assert!(
            zip::entry(&z[..z.len() - 30], "a.txt", 100).is_err(),
            "cut short"
        );
    }
    let stored = support::zip(&[("a.txt", b"first".as_slice())], false);
    assert!(
        zip::entry(stored.as_slice(), "a.txt", 2).is_err(),
        "over the limit"
    );
    assert!(zip::entry(b"not a zip".as_slice(), "a", 1).is_err());
}

#[test]
fn a_builds_signing_rule_and_defaults_come_from_its_own_files() {
    let tmp = tempfile::tempdir().unwrap();
    let esr = Build::at(&firefox_build(
        tmp.path(),
        "usr/lib/firefox-esr",
        false,
        "esr",
        3,
    ));
    assert_eq!(esr.requires_signing(), Some(false));
    assert_eq!(esr.channel().as_deref(), Some("esr"));
    assert_eq!(
        esr.default_prefs().get(AUTO_DISABLE).map(String::as_str),
        Some("3")
    );
    let release = Build::at(&firefox_build(
        tmp.path(),
        "usr/lib/firefox",
        true,
        "release",
        15,
    ));
    assert_eq!(release.requires_signing(), Some(true));
    // Without an omni.ja to ask, the update channel says.
    std::fs::remove_file(release.dir.join("omni.ja")).unwrap();
    assert_eq!(release.requires_signing(), Some(true));
    std::fs::remove_file(esr.dir.join("omni.ja")).unwrap();
    assert_eq!(esr.requires_signing(), Some(false));
    // A profile names the build that last ran it; executables lead to their builds.
    let profile = tmp.path().join("p");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(
        profile.join("compatibility.ini"),
        format!(
            "[Compatibility]\nLastVersion=153.7.0esr_1/1\nLastPlatformDir={0}\nLastAppDir={0}/browser\n",
            esr.dir.display()
        ),
    )
    .unwrap();
    assert_eq!(Build::of_profile(&profile), Some(esr.clone()));
    assert!(Build::of_profile(tmp.path()).is_none());
    // A build is a folder with an omni.ja.
    std::fs::write(release.dir.join("omni.ja"), b"").unwrap();
    std::fs::write(esr.dir.join("omni.ja"), b"").unwrap();
    let link = tmp.path().join("firefox-esr-link");
    std::os::unix::fs::symlink(esr.dir.join("firefox-esr"), &link).unwrap();
    assert_eq!(
        builds_of(&[link, release.dir.join("firefox")]),
        vec![esr, release]
    );
}

#[test]
fn per_profile_add_on_install_is_idempotent_and_uninstall_takes_out_exactly_micoffs() {
    let m = machine();
    let a = args(Some(&m.xpi));
    let before = snapshot(&m.env.home);

    let mut dry = a.clone();
    dry.dry_run = true;
    let (code, out) = run(&dry, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("would be written (micoff's copy of the add-on)"),
        "{out}"
    );
    assert_eq!(snapshot(&m.env.home), before, "--dry-run changes nothing");

    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("micoff 0.1.0 (micoff@micoff.org) is installed"),
        "{out}"
    );
    let copy = copy_of(&m.profile);
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&m.xpi).unwrap()
    );
    let user = read(&m.profile.join("user.js"));
    assert!(user.starts_with(USER_JS), "the user's lines first: {user}");
    assert!(
        user.contains(&format!("user_pref(\"{SIGNATURES}\", false);")),
        "{user}"
    );
    // Debian's ESR default 3: only the profile bit goes; scanning at every start adds it.
    assert!(
        user.contains(&format!("user_pref(\"{AUTO_DISABLE}\", 2);")),
        "{user}"
    );
    assert!(
        user.contains(&format!("user_pref(\"{STARTUP_SCAN}\", 1);")),
        "{user}"
    );
    let sha = micoff_files::sha256_hex(&std::fs::read(&m.xpi).unwrap());
    assert!(user.contains(&sha), "the copy's hash is recorded: {user}");
    assert!(read(
        &m.env
            .home
            .join(".mozilla/native-messaging-hosts/org.micoff.host.json")
    )
    .contains("micoff@micoff.org"));

    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        !out.contains("written") && !out.contains("updated"),
        "idempotent: {out}"
    );

    // Firefox ran: it copied the user.js values into prefs.js, next to its own and the user's.
    let prefs = format!(
        "// Mozilla User Preferences\nuser_pref(\"browser.download.dir\", \"/x\");\nuser_pref(\"{AUTO_DISABLE}\", 2);\nuser_pref(\"{SIGNATURES}\", false);\nuser_pref(\"{STARTUP_SCAN}\", 1);\nuser_pref(\"extensions.lastAppBuildId\", \"20261103151912\");\n"
    );
    std::fs::write(m.profile.join("prefs.js"), &prefs).unwrap();
    std::fs::set_permissions(
        m.profile.join("prefs.js"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    // Installing again (Firefox's copies in prefs.js are micoff's own values): nothing changes.
    let (_, out) = run(&a, &m.env);
    assert!(!out.contains("updated"), "{out}");

    let (code, out) = run(&uninstall(a.clone()), &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Firefox removes micoff at its next start"),
        "{out}"
    );
    assert!(!copy.exists());
    assert_eq!(read(&m.profile.join("user.js")), USER_JS);
    assert_eq!(
        read(&m.profile.join("prefs.js")),
        "// Mozilla User Preferences\nuser_pref(\"browser.download.dir\", \"/x\");\nuser_pref(\"extensions.lastAppBuildId\", \"20261103151912\");\n",
        "micoff's values go, Firefox's own and the user's stay"
    );
    let mode = std::fs::metadata(m.profile.join("prefs.js"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "prefs.js keeps its mode");
    let (code, out) = run(&uninstall(a), &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing of micoff's found"), "{out}");
}

#[test]
fn the_users_own_prefs_are_neither_duplicated_nor_taken_on_uninstall() {
    let m = machine();
    // The user turned signatures off in about:config (prefs.js) long ago.
    let prefs = format!("user_pref(\"{SIGNATURES}\", false);\n");
    std::fs::write(m.profile.join("prefs.js"), &prefs).unwrap();
    let mut a = args(Some(&m.xpi));
    a.firefox_release = true;
    a.release_delay_ms = 300;
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    let user = read(&m.profile.join("user.js"));
    assert!(!user.contains(SIGNATURES), "{user}");
    assert!(
        user.contains(&format!("user_pref(\"{RELEASE}\", true);")),
        "{user}"
    );
    assert!(
        user.contains(&format!("user_pref(\"{DELAY}\", 300);")),
        "{user}"
    );
    let (code, out) = run(&uninstall(a), &m.env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        read(&m.profile.join("prefs.js")),
        prefs,
        "the user's own value stays"
    );
    assert_eq!(read(&m.profile.join("user.js")), USER_JS);
}

#[test]
fn an_add_on_copy_micoff_did_not_make_is_left_alone() {
    let m = machine();
    // micoff from addons.mozilla.org (signed: other bytes) is already in the profile.
    let theirs = xpi(FIREFOX_EXTENSION_ID, "0.0.9");
    std::fs::create_dir_all(m.profile.join("extensions")).unwrap();
    std::fs::write(copy_of(&m.profile), &theirs).unwrap();
    let mut a = args(Some(&m.xpi));
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 3, "refused, the host manifest written: {out}");
    assert!(
        out.contains("already installed in this profile from another copy"),
        "{out}"
    );
    assert_eq!(std::fs::read(copy_of(&m.profile)).unwrap(), theirs);
    assert_eq!(read(&m.profile.join("user.js")), USER_JS);
    // With the release prefs too: those are done, the add-on is not.
    a.firefox_release = true;
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 3, "{out}");
    assert!(read(&m.profile.join("user.js")).contains(RELEASE));
    // Uninstall never removes it.
    let (code, out) = run(&uninstall(a), &m.env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read(copy_of(&m.profile)).unwrap(), theirs);
    assert_eq!(read(&m.profile.join("user.js")), USER_JS);
    // A copy changed since micoff made it (recorded hash differs) is left too.
    let m = machine();
    let a = args(Some(&m.xpi));
    assert_eq!(run(&a, &m.env).0, 0);
    std::fs::write(copy_of(&m.profile), &theirs).unwrap();
    let (code, out) = run(&uninstall(a), &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("left alone: not the copy micoff made"),
        "{out}"
    );
    assert!(copy_of(&m.profile).exists());
    assert_eq!(
        read(&m.profile.join("user.js")),
        USER_JS,
        "micoff's lines go all the same"
    );
}

#[test]
fn release_firefox_is_told_that_only_the_signed_add_on_works() {
    let m = machine();
    let release = firefox_build(&m.env.root, "usr/lib/firefox", true, "release", 15);
    std::fs::write(
        m.profile.join("compatibility.ini"),
        format!(
            "[Compatibility]\nLastVersion=140.0_1/1\nLastPlatformDir={0}\nLastAppDir={0}/browser\n",
            release.display()
        ),
    )
    .unwrap();
    let before = snapshot(&m.profile);
    let (code, out) = run(&args(Some(&m.xpi)), &m.env);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("accepts only add-ons signed by addons.mozilla.org"),
        "{out}"
    );
    assert!(out.contains("update channel release"), "{out}");
    assert_eq!(
        snapshot(&m.profile),
        before,
        "nothing written into that profile"
    );
    // A profile that has not run yet: the Firefox builds found here decide; ESR is among them.
    std::fs::remove_file(m.profile.join("compatibility.ini")).unwrap();
    let (code, out) = run(&args(Some(&m.xpi)), &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("note:") && out.contains("works in this profile when Firefox"),
        "{out}"
    );
    // Only release Firefox here: refused.
    let m = machine();
    std::fs::remove_dir_all(m.env.root.join("usr/lib/firefox-esr")).unwrap();
    firefox_build(&m.env.root, "usr/lib/firefox", true, "release", 15);
    let (code, out) = run(&args(Some(&m.xpi)), &m.env);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("has not run yet"), "{out}");
    assert!(!copy_of(&m.profile).exists());
}

#[test]
fn uninstall_leaves_a_profile_firefox_is_running_with() {
    let m = machine();
    let a = args(Some(&m.xpi));
    assert_eq!(run(&a, &m.env).0, 0);
    // Firefox's lock: a symlink naming its address and pid (this test's own: a live process).
    std::os::unix::fs::symlink(
        format!("127.0.1.1:+{}", std::process::id()),
        m.profile.join("lock"),
    )
    .unwrap();
    let before = snapshot(&m.profile);
    let (code, out) = run(&uninstall(a.clone()), &m.env);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("Firefox is running with this profile"),
        "{out}"
    );
    assert_eq!(snapshot(&m.profile), before);
    // Installing while it runs is fine: it takes effect at the next start.
    assert_eq!(run(&a, &m.env).0, 0);
}

#[test]
fn bad_xpis_and_missing_paths_are_usage_errors() {
    let m = machine();
    let other = m.xpi.with_file_name("other.xpi");
    std::fs::write(&other, xpi("other@example.org", "1.0")).unwrap();
    let (code, out) = run(&args(Some(&other)), &m.env);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("add-on id other@example.org"), "{out}");
    std::fs::write(&other, b"not a zip").unwrap();
    assert_eq!(run(&args(Some(&other)), &m.env).0, 2);
    assert_eq!(
        run(&args(Some(&m.xpi.with_file_name("missing.xpi"))), &m.env).0,
        2
    );
    assert_eq!(run(&args(None), &m.env).0, 2, "install needs the xpi");
    assert!(!copy_of(&m.profile).exists());
    // A usage error is found before anything is written, the host manifest included.
    assert!(!m.env.home.join(".mozilla/native-messaging-hosts").exists());
    // A profile folder that is not there is not created, and refused before anything is written.
    let mut a = args(Some(&m.xpi));
    a.firefox_profiles = vec![m.profile.with_file_name("typo.default")];
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("typo.default: not a folder"), "{out}");
    assert!(!m.profile.with_file_name("typo.default").exists());
    assert!(!m.env.home.join(".mozilla/native-messaging-hosts").exists());
    // Nor is any folder that is not a Firefox profile (here: the home folder itself).
    a.firefox_profiles = vec![m.env.home.clone()];
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not a Firefox profile"), "{out}");
    assert!(!m.env.home.join("user.js").exists());
    assert!(!m.env.home.join(".mozilla/native-messaging-hosts").exists());
}

// ---- --system: policies.json -------------------------------------------------------------------

fn system(xpi: Option<&Path>) -> InstallArgs {
    let mut a = args(xpi);
    a.system = true;
    a.firefox_release = true;
    a
}

/// The policy file Firefox reads (Debian's ESR too): `/etc/firefox/policies/policies.json`.
fn policies(m: &Machine) -> PathBuf {
    m.env.root.join("etc/firefox/policies/policies.json")
}

fn json_of(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap()
}

/// An administrator's own policies, formatted by hand.
const THEIRS: &str = "{\n    \"policies\": {\n        \"DisableTelemetry\": true,\n        \"Preferences\": {\n            \"media.other\": { \"Value\": 1, \"Status\": \"locked\" }\n        }\n    }\n}\n";

#[test]
fn system_install_records_its_entries_and_uninstall_takes_out_only_those() {
    let m = machine();
    let a = system(Some(&m.xpi));
    std::fs::create_dir_all(policies(&m).parent().unwrap()).unwrap();
    std::fs::write(policies(&m), THEIRS).unwrap();
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    let copy = m.env.root.join("usr/local/share/micoff/micoff.xpi");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&m.xpi).unwrap()
    );
    let v = json_of(&policies(&m));
    assert_eq!(v["policies"]["DisableTelemetry"], json!(true));
    assert_eq!(
        v["policies"]["ExtensionSettings"][FIREFOX_EXTENSION_ID],
        json!({"installation_mode": "force_installed", "install_url": format!("file://{}", copy.display())})
    );
    assert_eq!(
        v["policies"]["Preferences"][SIGNATURES],
        json!({"Value": false, "Status": "default"})
    );
    assert_eq!(v["policies"]["Preferences"][RELEASE]["Value"], json!(true));
    assert!(
        !m.env.root.join("etc/firefox-esr").exists(),
        "nothing where no Firefox reads"
    );
    let record = m
        .env
        .root
        .join("usr/local/share/micoff/firefox-policies.json");
    assert!(read(&record).contains("etc/firefox/policies/policies.json"));
    assert!(m
        .env
        .root
        .join("usr/lib/mozilla/native-messaging-hosts/org.micoff.host.json")
        .exists());
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("unchanged") && !out.contains("updated"),
        "{out}"
    );
    assert!(
        !out.contains("the policy cannot install"),
        "only ESR here: {out}"
    );
    // With release Firefox next to it: said plainly, the ESR policy stays.
    firefox_build(&m.env.root, "usr/lib/firefox", true, "release", 15);
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("usr/lib/firefox (update channel release) accepts only add-ons signed"),
        "{out}"
    );

    // Uninstall: the release prefs go, micoff's add-on entry blocks micoff (Firefox keeps an add-on
    // whose entry is simply gone), the copy goes.
    let (code, out) = run(&uninstall(a.clone()), &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("now blocks micoff") && out.contains("run this again"),
        "{out}"
    );
    let v = json_of(&policies(&m));
    assert_eq!(
        v["policies"]["ExtensionSettings"][FIREFOX_EXTENSION_ID],
        json!({"installation_mode": "blocked"})
    );
    assert!(v["policies"]["Preferences"].get(RELEASE).is_none());
    assert!(v["policies"]["Preferences"].get(SIGNATURES).is_none());
    assert!(!copy.exists() && record.exists(), "{out}");
    // Again: the block goes, and the administrator's file is back byte for byte.
    let (code, out) = run(&uninstall(a.clone()), &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("blocks micoff"), "{out}");
    assert_eq!(read(&policies(&m)), THEIRS);
    assert!(!record.exists(), "{out}");
    // A third time: nothing of micoff's left, nothing changes.
    let (code, out) = run(&uninstall(a), &m.env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&policies(&m)), THEIRS);
}

#[test]
fn system_install_writes_only_where_a_firefox_is_and_cleans_the_folder_no_firefox_reads() {
    let m = machine();
    // Where micoff wrote before: /etc/firefox-esr/policies, recorded; Firefox never read it.
    let legacy = m.env.root.join("etc/firefox-esr/policies/policies.json");
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    let url = format!(
        "file://{}",
        m.env
            .root
            .join("usr/local/share/micoff/micoff.xpi")
            .display()
    );
    let old = format!(
        "{{\n  \"policies\": {{\n    \"DisableTelemetry\": true,\n    \"ExtensionSettings\": {{\n      \"{FIREFOX_EXTENSION_ID}\": {{\n        \"installation_mode\": \"force_installed\",\n        \"install_url\": \"{url}\"\n      }}\n    }}\n  }}\n}}\n"
    );
    std::fs::write(&legacy, &old).unwrap();
    let a = system(Some(&m.xpi));
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(policies(&m).exists(), "{out}");
    assert_eq!(
        json_of(&legacy),
        json!({"policies": {"DisableTelemetry": true}}),
        "{out}"
    );
    // No Firefox on the machine and no /etc/firefox: nothing to write for.
    let bare = machine();
    std::fs::remove_dir_all(bare.env.root.join("usr/lib/firefox-esr")).unwrap();
    let (code, out) = run(&system(Some(&bare.xpi)), &bare.env);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("no Firefox found"), "{out}");
    assert!(!policies(&bare).exists());
}

/// Nothing of micoff's under the machine's system folders: no copy of the add-on, no record, no
/// host manifest, nothing in the folder Firefox once was thought to read.
fn assert_nothing_installed(m: &Machine) {
    for p in [
        "usr/local/share/micoff",
        "usr/lib/mozilla/native-messaging-hosts/org.micoff.host.json",
        "etc/firefox-esr/policies",
    ] {
        assert!(!m.env.root.join(p).exists(), "{p} written");
    }
}

#[test]
fn system_install_refuses_a_policy_file_it_cannot_read_and_changes_nothing() {
    let m = machine();
    let a = system(Some(&m.xpi));
    std::fs::create_dir_all(policies(&m).parent().unwrap()).unwrap();
    for (theirs, why) in [
        ("", "not valid JSON"),
        (
            "{\"policies\": {\"DisableTelemetry\": true,}}\n",
            "not valid JSON",
        ),
        (
            "{\"policies\": {\"DisableTelemetry\": tru",
            "not valid JSON",
        ),
        ("// my policies\n{\"policies\": {}}", "not valid JSON"),
        ("[{\"policies\": {}}]", "not a JSON object"),
        (
            "{\"policies\": [\"DisableTelemetry\"]}",
            "`policies` is not an object",
        ),
        (
            "{\"policies\": {\"Preferences\": \"none\"}}",
            "`policies.Preferences` is not an object",
        ),
        (
            "{\"policies\": {\"ExtensionSettings\": null}}",
            "`policies.ExtensionSettings` is not an object",
        ),
    ] {
        std::fs::write(policies(&m), theirs).unwrap();
        let (code, out) = run(&a, &m.env);
        assert_eq!(code, 3, "{theirs:?}: {out}");
        assert!(
            out.contains("policies.json left alone") && out.contains(why),
            "{theirs:?}: {out}"
        );
        assert!(out.contains("nothing installed"), "{out}");
        assert_eq!(read(&policies(&m)), theirs, "byte for byte");
        assert_nothing_installed(&m);
        // Uninstall leaves it too (nothing of micoff's can be told in it).
        let (_, out) = run(&uninstall(a.clone()), &m.env);
        assert_eq!(read(&policies(&m)), theirs, "{out}");
    }
}

#[test]
fn a_policy_file_that_is_not_text_is_neither_written_over_nor_forgotten() {
    // An administrator's policies.json in Latin-1 (not UTF-8): read as "no file", the install would
    // write a fresh one over it and an uninstall would drop micoff's record of its entries.
    let latin1: Vec<u8> = [
        &THEIRS.as_bytes()[..THEIRS.len() - 3],
        b",\n    \"Comment\": \"caf\xe9\"\n}\n",
    ]
    .concat();
    let m = machine();
    let a = system(Some(&m.xpi));
    std::fs::create_dir_all(policies(&m).parent().unwrap()).unwrap();
    std::fs::write(policies(&m), &latin1).unwrap();
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("cannot be read") && out.contains("nothing installed"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(policies(&m)).unwrap(),
        latin1,
        "byte for byte"
    );
    assert_nothing_installed(&m);

    // Installed while the file was text, then turned into Latin-1 by someone else: uninstall
    // leaves the file and keeps micoff's record, so a later run can still take micoff's entries out.
    std::fs::write(policies(&m), THEIRS).unwrap();
    let (code, out) = run(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    let ours = std::fs::read(policies(&m)).unwrap();
    let edited: Vec<u8> = ours
        .iter()
        .map(|&b| if b == b'D' { 0xc4 } else { b })
        .collect();
    assert!(std::str::from_utf8(&edited).is_err());
    std::fs::write(policies(&m), &edited).unwrap();
    let record = m
        .env
        .root
        .join("usr/local/share/micoff/firefox-policies.json");
    let recorded = read(&record);
    let (_, out) = run(&uninstall(a.clone()), &m.env);
    assert!(out.contains("cannot be read"), "{out}");
    assert_eq!(std::fs::read(policies(&m)).unwrap(), edited, "{out}");
    assert_eq!(read(&record), recorded, "micoff's record kept: {out}");
    // Back to text: uninstall (blocking first, then taking the block out) goes on as recorded, and
    // the administrator's text is back byte for byte.
    std::fs::write(policies(&m), &ours).unwrap();
    for _ in 0..2 {
        let (code, out) = run(&uninstall(a.clone()), &m.env);
        assert_eq!(code, 0, "{out}");
    }
    assert_eq!(read(&policies(&m)), THEIRS);
}

#[test]
fn system_install_refuses_to_overwrite_an_admins_entry_and_uninstall_keeps_it() {
    let m = machine();
    let a = system(Some(&m.xpi));
    std::fs::create_dir_all(policies(&m).parent().unwrap()).unwrap();
    // An admin's own entry for micoff's id (from their server), and an admin's delay.
    for theirs in [
        format!(
            r#"{{"policies": {{"ExtensionSettings": {{"{FIREFOX_EXTENSION_ID}": {{"installation_mode": "force_installed", "install_url": "https://example.org/micoff.xpi"}}}}}}}}"#
        ),
        format!(
            r#"{{"policies": {{"ExtensionSettings": {{"{FIREFOX_EXTENSION_ID}": {{"installation_mode": "blocked"}}}}}}}}"#
        ),
        format!(
            r#"{{"policies": {{"Preferences": {{"{DELAY}": {{"Value": 2000, "Status": "locked"}}}}}}}}"#
        ),
    ] {
        std::fs::write(policies(&m), &theirs).unwrap();
        let (code, out) = run(&a, &m.env);
        assert_eq!(code, 3, "{out}");
        assert!(out.contains("not written by micoff"), "{out}");
        assert!(out.contains("nothing installed"), "{out}");
        assert_eq!(read(&policies(&m)), theirs, "byte for byte");
        assert_nothing_installed(&m);
        // Uninstall: nothing of micoff's there.
        let (code, out) = run(&uninstall(a.clone()), &m.env);
        assert_eq!(code, 0, "{out}");
        assert_eq!(read(&policies(&m)), theirs);
    }
    // The same shape as micoff's, never written by micoff: uninstall leaves it.
    let same = format!(
        r#"{{"policies": {{"Preferences": {{"{RELEASE}": {{"Value": true, "Status": "default"}}, "{SIGNATURES}": {{"Value": false, "Status": "default"}}}}}}}}"#
    );
    std::fs::write(policies(&m), &same).unwrap();
    let (code, out) = run(&uninstall(a), &m.env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(read(&policies(&m)), same);
}
