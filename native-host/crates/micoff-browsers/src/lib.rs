//! micoff-browsers: the one table of the browsers micoff knows ([`table`], a row per [`Browser`]);
//! the installer, capture latency and the /proc reader take their views from it. Facts only:
//! finding a browser is the installer's, reading processes micoff-proc's; the protocol's own
//! `Browser` (its three capture-latency browsers) maps onto this one.
//!
//! Module map: [`family`] ([`BrowserFamily`], what a family shares); [`facts`] (a row's shape:
//! [`BrowserFacts`], [`Executable`], [`InstallPath`]); [`table`]; here, [`Browser`] and its views.

pub mod facts;
pub mod family;
pub mod table;

pub use facts::{BrowserFacts, Executable, InstallPath};
pub use family::BrowserFamily;

/// A browser micoff knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Browser {
    Chrome,
    Chromium,
    Edge,
    Brave,
    Vivaldi,
    Firefox,
}

impl Browser {
    pub const ALL: [Browser; 6] = [
        Browser::Chrome,
        Browser::Chromium,
        Browser::Edge,
        Browser::Brave,
        Browser::Vivaldi,
        Browser::Firefox,
    ];

    /// Its row of the table.
    pub fn facts(self) -> &'static BrowserFacts {
        table::facts(self)
    }

    /// The stable lowercase name (`--browser`, the wire, micoff's files).
    pub fn key(self) -> &'static str {
        self.facts().key
    }

    /// The browser of a [`Browser::key`].
    pub fn from_key(key: &str) -> Option<Browser> {
        Self::ALL.into_iter().find(|b| b.key() == key)
    }

    /// The name people know it by (`Chrome`).
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    pub fn family(self) -> BrowserFamily {
        self.facts().family
    }

    pub fn is_firefox(self) -> bool {
        self.family() == BrowserFamily::Firefox
    }

    /// Its user manifest folder, relative to where its user data folder is (the config home;
    /// home for Firefox): `google-chrome/NativeMessagingHosts`, `.mozilla/native-messaging-hosts`.
    pub fn user_manifest_dir(self) -> String {
        format!(
            "{}/{}",
            self.facts().user_data_dir,
            self.family().manifest_dir_name()
        )
    }

    /// A file the browser itself writes once it has run for this user, relative to the same base
    /// as [`Browser::user_manifest_dir`]: `chromium/Local State`, `.mozilla/firefox/profiles.ini`
    /// (Firefox's legacy root only: the installer's `InstallEnv::firefox_profile_roots` has them all).
    pub fn profile_marker(self) -> String {
        format!(
            "{}/{}",
            self.facts().user_data_dir,
            self.family().profile_marker()
        )
    }

    /// Commands on PATH that start it, any channel (the installer looks for these).
    pub fn commands(self) -> impl Iterator<Item = &'static str> {
        self.executables_where(|e| e.command)
    }

    /// The commands of its stable channel, the ones people and its desktop entries run it by
    /// (capture latency's PATH wrappers take these names).
    pub fn stable_commands(self) -> impl Iterator<Item = &'static str> {
        self.executables_where(|e| e.stable_command)
    }

    /// Names its main process has: a comm, or the basename of its exe or argv0.
    pub fn process_names(self) -> impl Iterator<Item = &'static str> {
        self.executables_where(|e| e.process)
    }

    /// The binaries libpulse names as its clients' `application.process.binary`.
    pub fn pulse_binaries(self) -> impl Iterator<Item = &'static str> {
        self.executables_where(|e| e.pulse_binary)
    }

    /// Its executables at the usual install locations (relative to the root).
    pub fn install_paths(self) -> impl Iterator<Item = &'static str> {
        self.facts().install_paths.iter().map(|p| p.path)
    }

    /// Those of [`Browser::install_paths`] that are the browser's program itself, not a launcher
    /// script: the folder Chromium reads external extensions from is next to it.
    pub fn program_paths(self) -> impl Iterator<Item = &'static str> {
        self.facts()
            .install_paths
            .iter()
            .filter(|p| p.program)
            .map(|p| p.path)
    }

    fn executables_where(
        self,
        keep: impl Fn(&Executable) -> bool,
    ) -> impl Iterator<Item = &'static str> {
        self.facts()
            .executables
            .iter()
            .filter(move |e| keep(e))
            .map(|e| e.name)
    }
}

#[cfg(feature = "clap")]
impl clap::ValueEnum for Browser {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.key()))
    }
}

#[cfg(test)]
mod tests;
