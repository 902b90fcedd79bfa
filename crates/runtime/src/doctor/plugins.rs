//! `elroy doctor`'s plugin check (`docs/tool-rules.md#plugin-trust`): every plugin elroy finds but
//! does not run because the person has not trusted it as it is now (new, changed since trusted,
//! unreadable), and a trust list elroy cannot read. No plugin is run.

use elroy_config::Config;
use elroy_plugins::TrustState;

use super::{Area, Problem, relative};

/// The plugin problems of the home and plugin paths of `config`, in load order.
pub(super) fn problems(config: &Config) -> Vec<Problem> {
    let report = elroy_plugins::config_trust_report(config);
    let home = &config.paths.elroy_home;
    let mut found = Vec::new();
    if let Some(e) = &report.list_error {
        found.push(Problem {
            area: Area::Plugins,
            path: Some(elroy_plugins::TRUST_FILE.to_owned()),
            message: format!("{e}; no plugin is run until it is"),
        });
    }
    for plugin in report.untrusted() {
        let full = plugin.path.display();
        let message = match &plugin.state {
            TrustState::Unreadable(e) => {
                format!("{full} cannot be read ({e}), so elroy does not run it")
            }
            state => format!(
                "{full} is not trusted ({}), so elroy does not run it; read it, then run \
                 `elroy plugins trust {full}`",
                state.describe()
            ),
        };
        found.push(Problem {
            area: Area::Plugins,
            path: Some(relative(home, &plugin.path)),
            message,
        });
    }
    found
}
