//! `berth setting list`: every setting berth knows, its value, its default
//! and what it accepts.

use berth_proto::pb;
use berth_vocab::settings::Setting;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth setting list`.
pub async fn cmd_setting_list(ctx: &mut Ctx) -> Result<(), CliError> {
    let mut values = Vec::new();
    for s in Setting::ALL {
        let req = pb::SettingRequest {
            key: s.key().to_string(),
            value: String::new(),
        };
        let reply = ctx
            .unary(req, |mut c, r| async move { c.get_setting(r).await })
            .await?;
        values.push((s, reply.value));
    }
    if ctx.json {
        let list: Vec<_> = values
            .iter()
            .map(|(s, v)| super::described_json(s.key(), v.as_deref()))
            .collect();
        return output::json(&serde_json::json!({ "settings": list }));
    }
    let mut text = String::new();
    for (s, value) in &values {
        match value {
            Some(v) => text.push_str(&format!(
                "{} = {}\n",
                s.key(),
                berth_vocab::text::escaped(v)
            )),
            None => text.push_str(&format!("{} is not set: {}\n", s.key(), s.when_unset())),
        }
        text.push_str(&format!("    {}\n", super::described_text(s.key())));
    }
    output::text(&text)
}
