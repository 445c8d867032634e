//! Whether the saving of srbchannel (an `on` row against its `off` row) means anything
//! ([`saving_note`]), and the words every text that says it does not is built from.

use crate::report::mode::SrbchannelState;

/// What voids the saving column: on and off did not differ in srbchannel. Every text that says
/// so (the rows' notes, the report's warnings) is built from this and [`SAVING_MEANS_NOTHING`].
pub const SAME_CLIENT: &str = "on and off are the same client here";
pub const SAVING_MEANS_NOTHING: &str = "the saving column means nothing";

/// A warning that `what` made on and off the same client: "<what>: on and off are the same
/// client here; the saving column means nothing".
pub fn same_client_warning(what: &str) -> String {
    format!("{what}: {SAME_CLIENT}; {SAVING_MEANS_NOTHING}")
}

/// How far the saving column of an `on` row can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavingNote {
    /// The on client had srbchannel and the off client did not: the saving stands, no note.
    Valid,
    /// srbchannel use could not be verified: the saving is given, with a note.
    Unverified,
    /// on and off were the same kind of client (the reason in words): the saving is left out.
    Void(&'static str),
}

impl SavingNote {
    /// True when the saving must be left out (`n/a`, JSON null).
    pub fn voids_saving(self) -> bool {
        matches!(self, SavingNote::Void(_))
    }

    /// The note printed under the table and kept as `saving_note` in the JSON.
    pub fn text(self) -> Option<String> {
        match self {
            SavingNote::Valid => None,
            SavingNote::Unverified => {
                Some("srbchannel use could not be verified; the saving is unverified".into())
            }
            SavingNote::Void(why) => Some(format!("{SAME_CLIENT} ({why}); {SAVING_MEANS_NOTHING}")),
        }
    }
}

/// Whether the saving of an `on` row against its `off` row means anything, from what each got.
pub fn saving_note(on: SrbchannelState, off: SrbchannelState) -> SavingNote {
    match (on, off) {
        (SrbchannelState::Active, SrbchannelState::Inactive) => SavingNote::Valid,
        (SrbchannelState::Inactive, _) => SavingNote::Void("the on client did not get srbchannel"),
        (_, SrbchannelState::Active) => SavingNote::Void("the off client got srbchannel anyway"),
        _ => SavingNote::Unverified,
    }
}
