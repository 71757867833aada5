//! Reading, changing, backing up and writing one config file. Every file of
//! a registration is planned (read, parsed, changed in memory) before any is
//! written, so a malformed file refuses the whole command and nothing is
//! touched. Every file is reached through its [`Place`]: a project's beneath
//! the project folder, following no link.

use std::path::PathBuf;

use super::clients::{Edit, FileSpec};
use super::place::{Place, Unusable};
use super::{json, toml};

/// Install or uninstall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Add berth's entries.
    Install,
    /// Remove them.
    Uninstall,
}

/// What happens to a file's backup, `<file>.berth-backup`: the file as it
/// was before berth's first install into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backup {
    /// None is written, restored or left.
    None,
    /// Install saves the file's current content there first (only when the
    /// file holds none of berth's parts and no backup exists yet).
    Save(PathBuf),
    /// Uninstall wrote the backup's bytes back; the backup is removed.
    Restore(PathBuf),
    /// Uninstall could not give back the original bytes because something
    /// else changed since install: the backup stays for the user.
    Keep(PathBuf),
}

/// One file's planned change.
#[derive(Debug)]
pub struct Planned {
    /// The file (in the user's scope, a symlink's target when the path is a link).
    pub path: PathBuf,
    /// Where it is written.
    place: Place,
    /// Where its backup is.
    backup_place: Place,
    /// Its content now (`None`: it does not exist).
    pub old: Option<String>,
    /// Its content after (`None`: deleted).
    pub new: Option<String>,
    /// What happens to its backup.
    pub backup: Backup,
}

impl Planned {
    /// Whether anything changes.
    pub fn changed(&self) -> bool {
        self.old != self.new
    }

    /// What happens, in one word.
    pub fn action(&self) -> &'static str {
        match (&self.old, &self.new) {
            _ if !self.changed() => "unchanged",
            (None, Some(_)) => "created",
            (Some(_), None) => "removed",
            _ if matches!(self.backup, Backup::Restore(_)) => "restored",
            _ => "updated",
        }
    }

    /// A unified diff of the change ("" when nothing changes).
    pub fn diff(&self) -> String {
        if !self.changed() {
            return String::new();
        }
        let name = self.path.display().to_string();
        let old_name = if self.old.is_some() {
            name.clone()
        } else {
            "/dev/null".into()
        };
        let new_name = if self.new.is_some() {
            name
        } else {
            "/dev/null".into()
        };
        similar::TextDiff::from_lines(
            self.old.as_deref().unwrap_or(""),
            self.new.as_deref().unwrap_or(""),
        )
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &new_name)
        .to_string()
    }

    /// Writes the change: a first backup before it, the new content
    /// atomically (or removes the file), and a restored backup's removal
    /// after it.
    pub fn write(&self) -> Result<Written, String> {
        let path = &self.path;
        if let (Backup::Save(b), Some(old), true) = (&self.backup, &self.old, self.changed()) {
            // Never replaces a backup (created exclusively): a later write by berth cannot
            // overwrite the pre-install content.
            self.backup_place
                .create_new(old)
                .map_err(|e| format!("backing up {} to {}: {e}", path.display(), b.display()))?;
        }
        let mut folders = Vec::new();
        if self.changed() {
            match &self.new {
                Some(text) => folders = self.place.write(text)?,
                None => self.place.remove()?,
            }
        }
        let backup = match &self.backup {
            Backup::None => None,
            Backup::Save(b) => self.changed().then(|| b.clone()),
            Backup::Keep(b) => Some(b.clone()),
            Backup::Restore(_) => {
                self.backup_place.remove()?;
                None
            }
        };
        Ok(Written { backup, folders })
    }

    /// After an uninstall: removes the folders on the way to the file that berth's install
    /// created and that hold nothing else now (`folders`). Returns those removed.
    pub fn remove_left_folders(&self) -> Result<Vec<PathBuf>, String> {
        self.place.remove_left_folders()
    }
}

/// What writing a change did.
#[derive(Debug, Default)]
pub struct Written {
    /// The backup that now holds the file's pre-install content, if any.
    pub backup: Option<PathBuf>,
    /// The folders created for the file, outermost first.
    pub folders: Vec<PathBuf>,
}

/// The suffix of a file's backup, `<file>.berth-backup`: the file as it was before berth's
/// first change.
const BACKUP_SUFFIX: &str = ".berth-backup";

/// Where `spec`'s file is reached: beneath the project folder in the project's scope, by its
/// path (a link followed) in the user's.
pub fn place(spec: &FileSpec) -> Result<Place, String> {
    match &spec.within {
        Some(project) => Place::beneath(project, &spec.path),
        None => Ok(Place::user(&spec.path)),
    }
}

/// Reads a file as text: `None` when it does not exist.
fn read_text(place: &Place) -> Result<Option<String>, String> {
    match place.read().map_err(Unusable::message)? {
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("{} is not UTF-8 text", place.path().display())),
        None => Ok(None),
    }
}

/// Reads `spec`'s file: `None` when it does not exist.
pub fn read(spec: &FileSpec) -> Result<Option<String>, String> {
    read_text(&place(spec)?)
}

/// Plans the change `action` makes to `spec`'s file. `keep` leaves the file
/// as it is on uninstall (entries another registered client still uses).
/// An error means the file is malformed or unreadable, and names it.
pub fn plan(spec: &FileSpec, action: Action, keep: bool) -> Result<Planned, String> {
    let place = place(spec)?;
    let path = place.path().to_path_buf();
    let old = read_text(&place)?;
    let refuse = |why: String| format!("{}: {why}", path.display());
    let text = old.as_deref().unwrap_or("");
    let backup_place = place.with_suffix(BACKUP_SUFFIX);
    if keep && action == Action::Uninstall {
        // Still parse it: a malformed file is reported the same either way.
        check(spec, text).map_err(refuse)?;
        return Ok(Planned {
            path,
            place,
            backup_place,
            new: old.clone(),
            old,
            backup: Backup::None,
        });
    }
    let backup_file = backup_place.path().to_path_buf();
    // A backup that cannot be read as text is no original to give back; one that is a link
    // inside a project, or no regular file, refuses the command.
    let backup = match backup_place.read() {
        Ok(bytes) => bytes.and_then(|b| String::from_utf8(b).ok()),
        Err(Unusable::Refused(why)) => return Err(why),
        Err(Unusable::Failed(_)) => None,
    };
    // A backup, even one that cannot be read, says the file existed before
    // berth's install: such a file is never deleted.
    let existed = backup_place.exists();
    // Whether other servers of berth's stay in the file after this change
    // (berth's own, or ones `berth exec` wraps): the backup serves them too.
    let others_left;
    let (new, holds_berth, origin_matches) = match &spec.edit {
        Edit::Json(edit) => {
            let reader = spec.reader;
            // One tree to install into and one to remove from: edits change a tree in place.
            let doc = json::Doc::parse(text, reader).map_err(refuse)?;
            let bare_doc = json::Doc::parse(text, reader).map_err(refuse)?;
            let before = doc.value();
            let origin_doc = backup
                .as_deref()
                .and_then(|b| json::Doc::parse(b, reader).ok());
            let origin = origin_doc.as_ref().map(json::Doc::value);
            json::uninstall(&bare_doc, edit, origin.as_ref()).map_err(refuse)?;
            let bare = bare_doc.value();
            let servers = |doc: &serde_json::Map<String, serde_json::Value>| match edit {
                json::JsonEdit::Mcp { container, .. } => json::holds_servers(doc, container),
                _ => false,
            };
            let holds_berth = bare != before || servers(&before);
            let after_doc = if action == Action::Install {
                json::install(&doc, edit).map_err(refuse)?;
                doc
            } else {
                bare_doc
            };
            let after = after_doc.value();
            others_left = servers(&after);
            // Comments count as TOML's do: one the user changed since install survives.
            let origin_matches = origin.as_ref() == Some(&after)
                && origin_doc.as_ref().map(json::Doc::comments) == Some(after_doc.comments());
            let new = if after == before {
                old.clone()
            } else if action == Action::Install {
                Some(after_doc.text())
            } else if origin_matches {
                // Nothing else changed since berth's install: the original, byte for byte.
                backup.clone()
            } else if !existed && after == json_skeleton(edit, reader) {
                // Only what berth's install created is left, and no backup
                // says the file existed before: the file was berth's.
                None
            } else {
                Some(after_doc.text())
            };
            (new, holds_berth, origin_matches)
        }
        Edit::Toml(server) => {
            let before = toml::parse(text).map_err(refuse)?;
            let origin = backup.as_deref().and_then(|b| toml::parse(b).ok());
            let mut bare = before.clone();
            toml::uninstall(&mut bare, &server.name, origin.as_ref()).map_err(refuse)?;
            let holds_berth =
                toml::canonical(&bare) != toml::canonical(&before) || toml::holds_servers(&before);
            let mut after = before.clone();
            if action == Action::Install {
                toml::install(&mut after, server).map_err(refuse)?;
            } else {
                after = bare;
            }
            others_left = toml::holds_servers(&after);
            // TOML keeps comments, so only identical text counts as the
            // original: a comment the user edited since install survives.
            let origin_matches = backup.as_deref() == Some(after.to_string().as_str());
            let canon = toml::canonical(&after);
            let new = if canon == toml::canonical(&before) {
                old.clone()
            } else if action == Action::Uninstall
                && !existed
                && canon.is_empty()
                && after.to_string().trim().is_empty()
            {
                None
            } else {
                Some(after.to_string())
            };
            (new, holds_berth, origin_matches)
        }
    };
    let backup = match (action, &backup) {
        (Action::Install, None) if old.is_some() && !holds_berth => Backup::Save(backup_file),
        (Action::Install, _) => Backup::None,
        (Action::Uninstall, None) => Backup::None,
        (Action::Uninstall, Some(_)) if origin_matches => Backup::Restore(backup_file),
        (Action::Uninstall, Some(b)) if !holds_berth && old.as_deref() == Some(b.as_str()) => {
            // berth's parts were removed by hand and nothing else changed.
            Backup::Restore(backup_file)
        }
        (Action::Uninstall, Some(_)) if others_left => Backup::None,
        (Action::Uninstall, Some(_)) if holds_berth => Backup::Keep(backup_file),
        (Action::Uninstall, Some(_)) => Backup::None,
    };
    Ok(Planned {
        path,
        place,
        backup_place,
        old,
        new,
        backup,
    })
}

/// Parses `spec`'s `text` as its client reads it.
fn check(spec: &FileSpec, text: &str) -> Result<(), String> {
    match spec.edit {
        Edit::Json(_) => json::parse(text, spec.reader).map(drop),
        Edit::Toml(_) => toml::parse(text).map(drop),
    }
}

/// What an uninstall leaves of a file that berth's install created.
fn json_skeleton(
    edit: &json::JsonEdit,
    reader: json::Reader,
) -> serde_json::Map<String, serde_json::Value> {
    let Ok(doc) = json::Doc::parse("", reader) else {
        return serde_json::Map::new();
    };
    let _ = json::install(&doc, edit);
    let _ = json::uninstall(&doc, edit, None);
    doc.value()
}

/// Whether `spec`'s file holds berth's MCP server entry (for the shared-hooks
/// rule). A file that cannot be read or parsed counts as holding it: keeping
/// hooks is the safe side.
pub fn has_server(spec: &FileSpec) -> bool {
    let Ok(text) = read(spec) else {
        return true;
    };
    let text = text.unwrap_or_default();
    match &spec.edit {
        Edit::Json(json::JsonEdit::Mcp { container, .. }) => {
            match json::parse(&text, spec.reader) {
                Ok(doc) => doc
                    .get(*container)
                    .and_then(|s| s.get(json::SERVER_NAME))
                    .is_some(),
                Err(_) => true,
            }
        }
        Edit::Toml(_) => match toml::parse(&text) {
            Ok(doc) => doc
                .get("mcp_servers")
                .and_then(|s| s.get(json::SERVER_NAME))
                .is_some(),
            Err(_) => true,
        },
        Edit::Json(_) => false,
    }
}
