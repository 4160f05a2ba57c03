//! `tagger update --export-steps`: each step's switch configurations, as
//! the switches hold them after it, every configuration the fabric passes
//! through read back and judged before anything is written.

use super::{Step, Update};
use crate::error::Result;
use crate::sonic::SharedExport;
use crate::tagging::traffic::Classification;
use serde_json::{Value, json};
use std::path::Path;
use tagger_generators::NodeId;

mod running;
mod window;

use running::Running;
use window::{Rung, window_classes};

/// The union topology's file in a per-step export directory.
pub const UNION_FILE: &str = "union-topology.json";

/// Format of a per-step export directory's `summary.json`.
pub const EXPORT_FORMAT: &str = "tagger-update-export/2";

impl Update {
    /// Per step, the configuration of the switches it changes, as they
    /// are after it, each configuration the fabric passes through judged
    /// before anything is written.
    ///
    /// The installed plan's own export, as `tagger run --export` wrote it
    /// on the old topology `old` (its traffic classes chosen there, so
    /// every switch's function is the one it runs), is what every switch
    /// runs at first. Switches that gain new links first bind their new
    /// ports (`step-0-ports`: their installed configuration with the new
    /// ports bound, lossless nowhere yet), and that state is judged like
    /// every other. The states between
    /// two drains form a window whose traffic classes are chosen together
    /// (packets of any of its states may meet), beside the dependencies of
    /// what runs when it opens ([`crate::sonic::classify_states`],
    /// [`crate::sonic::build_classified`]): the first choice within the
    /// switches' traffic classes of a ladder that runs from "switches
    /// keep the classes they run" to "each state alone". Where the choice
    /// is not the first, switches whose tables stay take the window's
    /// classes first (`step-N-prepare`); where it gives no guarantee, the
    /// window shrinks to the state in place and the next one, and a window
    /// a drain opens leads with the drained state alone. A step installs the configuration
    /// of its switches and clears those left without lossless entries; the
    /// others keep what they run. After the last step, switches whose
    /// tables stayed but whose classes differ from the new plan's export
    /// take it (`step-N-tidy`).
    ///
    /// Every running configuration is decoded as `tagger verify
    /// --exported` decodes a directory and judged for every packet
    /// ([`crate::sonic::read_export`]): it must hold every entry of the
    /// state, and, unless the step drains first, its dependencies together
    /// with those of the configuration before it must be acyclic (packets
    /// the old one decided are still in flight). A step that fails this
    /// with only its own switches installed also installs every switch
    /// whose configuration differs ([`StepExport::switches`]); one that
    /// still fails only on the dependencies of before and after together
    /// is marked [`StepExport::drain`] (the fabric's lossless queues empty
    /// first) and a new window opens after it.
    ///
    /// # Errors
    /// The export's errors ([`crate::Error::Export`]: a priority without a
    /// queue or a tag without a DSCP value in the mapping), and
    /// [`crate::Error::Update`] naming the step whose running configuration
    /// fails the judgment.
    pub fn export_steps(
        &self,
        old: &tagger_generators::Topology,
        format: crate::sonic::Format,
        opts: &crate::sonic::Options,
    ) -> Result<Vec<StepExport>> {
        let mut out = Vec::with_capacity(self.steps.len() + 1);
        self.export_steps_each(old, format, opts, &mut |x| {
            out.push(x);
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Update::export_steps`], handing each directory to `sink` as soon
    /// as it is complete instead of holding them all: a SONiC directory
    /// holds each of its switches' base, configuration and patch, and a
    /// switch-by-switch schedule has a directory per switch.
    ///
    /// # Errors
    /// As [`Update::export_steps`], and `sink`'s.
    pub fn export_steps_each(
        &self,
        old: &tagger_generators::Topology,
        format: crate::sonic::Format,
        opts: &crate::sonic::Options,
        sink: &mut dyn FnMut(StepExport) -> Result<()>,
    ) -> Result<()> {
        let topo = &self.correspondence.union;
        let mut states = vec![self.installed.clone()];
        states.extend(self.states());
        let mut first = self.installed_export(old, format, opts)?;
        // Every switch of it holds it (`held` below), so its bases and
        // patches are no base of anything the walk writes.
        for sw in &mut first.switches {
            (sw.base, sw.patch) = (None, None);
        }
        let first = SharedExport::from(first);
        let running = Running::of(&first);
        let before = running.judge(topo, &first.summary, "the installed export")?;
        let mut walk = StepWalk {
            u: self,
            topo,
            states,
            format,
            opts,
            lossless_tcs: match format {
                crate::sonic::Format::Sonic => opts.profile.lossless_tcs(),
                crate::sonic::Format::Json => u32::MAX,
            },
            running,
            before,
            window: Default::default(),
            rung: Rung::Running,
            sink,
            held: Default::default(),
            cache: Default::default(),
        };
        // What each switch holds: the installed export as `tagger run
        // --export` wrote it on the old topology, then each directory's.
        if format == crate::sonic::Format::Sonic {
            let on_old = self.export_on_old(old, opts)?;
            let c = &self.correspondence;
            for (u, o) in c.old_node.iter().enumerate() {
                if let Some(sw) = o.and_then(|o| on_old.switches.iter().find(|s| s.node == o)) {
                    walk.held.insert(u as NodeId, sw.config.clone());
                }
            }
        }
        walk.ports(&first)?;
        drop(first);
        let mut last = None;
        for (i, step) in self.steps.iter().enumerate() {
            if walk.window.is_empty() || step.drain {
                walk.open_window(i, step)?;
            }
            if let Some(ex) = walk.step(i, step, i + 1 == self.steps.len())? {
                last = Some(ex);
            }
        }
        if let Some(fin) = last {
            walk.tidy(fin)?;
        }
        Ok(())
    }

    /// The installed plan's export as the switches run it: its traffic
    /// classes those `tagger run --export` chose on the old topology
    /// (classes chosen on the union could group unplanned packets, such
    /// as U-turns, otherwise, and the switches not yet changed run the old
    /// ones), written on the union topology.
    ///
    /// # Errors
    /// As [`crate::sonic::build_classified`].
    pub fn installed_export(
        &self,
        old: &tagger_generators::Topology,
        format: crate::sonic::Format,
        opts: &crate::sonic::Options,
    ) -> Result<crate::sonic::Export> {
        let c = &self.correspondence;
        let on_old = c.union_on_old(&self.installed, old);
        let classes = crate::tagging::traffic::classify(old, &on_old.keys(old)?)?;
        let classes = c.classes_on_union(old, &classes);
        crate::sonic::build_classified(&c.union, &self.installed, &classes, format, opts)
    }

    /// The installed plan's SONiC export on the old topology, as `tagger
    /// run --export` wrote it: what the switches run before any step.
    fn export_on_old(
        &self,
        old: &tagger_generators::Topology,
        opts: &crate::sonic::Options,
    ) -> Result<crate::sonic::Export> {
        let on_old = self.correspondence.union_on_old(&self.installed, old);
        let opts = crate::sonic::Options {
            base: opts.base.restricted_to(old),
            ..opts.clone()
        };
        crate::sonic::build(old, &on_old, crate::sonic::Format::Sonic, &opts)
    }

    /// Fills `dir` (empty) with [`Update::export_steps`]: one directory
    /// each ([`StepExport::dir`]: `step-0-ports`, `step-N-prepare`,
    /// `step-N-ACTION`, `step-N-tidy`), holding `<node>.json` per switch it
    /// changes and the export's `summary.json` (whose `cleared` lists its
    /// switches left with no lossless entry); [`UNION_FILE`]; and
    /// `summary.json` (`tagger-update-export/2`) listing the directories
    /// in the order to apply them.
    ///
    /// # Errors
    /// As [`Update::export_steps`], and [`crate::Error::Io`] naming the
    /// file.
    pub fn write_export_steps(&self, dir: &Path, exports: &[StepExport]) -> Result<()> {
        let listed = exports
            .iter()
            .map(|x| self.write_step_dir(dir, x))
            .collect::<Result<Vec<Value>>>()?;
        self.write_steps_summary(dir, listed)
    }

    /// [`Update::export_steps`] written into `dir` (empty) as
    /// [`Update::write_export_steps`] writes it, each directory as soon as
    /// it is complete, so that only one is held at a time (a SONiC
    /// directory's switch files were 1.5 GB held together for the three
    /// steps of a 210-switch Jellyfish's growth).
    ///
    /// Returns: the directories written, in order, each without its switch
    /// files ([`StepExport::export`]'s `switches` emptied; its summary
    /// kept).
    ///
    /// # Errors
    /// As [`Update::export_steps`] and [`Update::write_export_steps`].
    pub fn write_export_steps_from(
        &self,
        dir: &Path,
        old: &tagger_generators::Topology,
        format: crate::sonic::Format,
        opts: &crate::sonic::Options,
    ) -> Result<Vec<StepExport>> {
        let mut listed = Vec::new();
        let mut written = Vec::new();
        self.export_steps_each(old, format, opts, &mut |mut x| {
            listed.push(self.write_step_dir(dir, &x)?);
            x.export.switches = Vec::new();
            written.push(x);
            Ok(())
        })?;
        self.write_steps_summary(dir, listed)?;
        Ok(written)
    }

    /// Directory `x` written under `dir`; returns its entry of the steps'
    /// `summary.json`.
    fn write_step_dir(&self, dir: &Path, x: &StepExport) -> Result<Value> {
        let sub = dir.join(&x.dir);
        std::fs::create_dir(&sub).map_err(|e| crate::Error::io(&sub, e))?;
        crate::sonic::write_files(&sub, &x.export)?;
        let (action, any_order, tables) = match x.step.map(|i| &self.steps[i]) {
            Some(s) => (s.action.as_str(), s.any_order, &s.switches[..]),
            None if x.dir.ends_with("-ports") => ("ports", true, &[][..]),
            None if x.dir.ends_with("-tidy") => ("tidy", true, &[][..]),
            None => ("prepare", true, &[][..]),
        };
        let drain = x.drain;
        // Switches whose tables stay but whose classes change.
        let classes_only: Vec<NodeId> = x
            .switches
            .iter()
            .copied()
            .filter(|v| !tables.contains(v))
            .collect();
        Ok(json!({
            "step": x.export.summary["update_step"],
            "action": action,
            "dir": x.dir,
            "switches": x.switches,
            "cleared": x.cleared,
            "classes_only": classes_only,
            "any_order": any_order,
            "drain": drain,
        }))
    }

    /// The steps' `summary.json` (listing `listed`) and the union topology
    /// it names, under `dir`.
    fn write_steps_summary(&self, dir: &Path, listed: Vec<Value>) -> Result<()> {
        // The union topology (old and new links, ports named as the
        // switches have them): what `tagger verify --exported` reads a
        // running configuration between steps against.
        let union = tagger_generators::file::to_json(&self.correspondence.union);
        crate::output::write_staged(&dir.join(UNION_FILE), &union)?;
        let v = json!({
            "format": EXPORT_FORMAT,
            "topology": self.correspondence.union.name(),
            "topology_file": UNION_FILE,
            "steps": listed,
        });
        let text = serde_json::to_string_pretty(&v).expect("JSON values serialise");
        crate::output::write_staged(&dir.join("summary.json"), &(text + "\n"))
    }
}

/// One directory of [`Update::export_steps`]: a step's export, or the
/// preparation before it.
#[derive(Clone, Debug)]
pub struct StepExport {
    /// The step (index into [`Update::steps`]); `None` for a preparation:
    /// switches whose tables stay take new traffic classes before the step
    /// (the classes they run were chosen apart from the step's, and
    /// together would not pass the read-back).
    pub step: Option<usize>,
    /// The directory's name: `step-N-ACTION`, or `step-N-prepare` before
    /// step N.
    pub dir: String,
    /// The switches it changes.
    pub switches: Vec<NodeId>,
    /// The configuration of those switches, as they are after it; its
    /// `summary.json` lists them.
    pub export: crate::sonic::Export,
    /// Its switches left with no lossless entry: their lossless
    /// configuration goes.
    pub cleared: Vec<NodeId>,
    /// The fabric's lossless queues must empty before it is loaded: the
    /// schedule's step drains ([`Step::drain`]), or what the switches run
    /// before it and after it, together, have a dependency cycle (the
    /// traffic classes of the two could not be chosen together) while
    /// what runs after it passes alone.
    pub drain: bool,
}

impl StepExport {
    /// Each switch's base made the configuration it runs before this
    /// directory (`prev`, where it runs one; else the base it carries, else
    /// `read`, its base as the export read it) and its patch the change from
    /// it: applied in order, the directories' patches take every switch
    /// through each state (`config apply-patch` applies a patch to what
    /// the switch holds).
    fn rebase(
        &mut self,
        prev: impl Fn(NodeId) -> Option<Value>,
        read: impl Fn(NodeId) -> Option<Value>,
    ) {
        for sw in &mut self.export.switches {
            let base = prev(sw.node).or_else(|| sw.base.clone());
            let Some(base) = base.or_else(|| read(sw.node)) else {
                continue;
            };
            let patch = json_patch::diff(&base, &sw.config);
            sw.patch = Some(serde_json::to_value(&patch).expect("a patch serialises"));
            sw.base = Some(base);
        }
    }

    /// `ex` kept to `switches`, with the summary saying which step (index
    /// `before`) it is or precedes.
    fn of(
        ex: SharedExport,
        step: Option<usize>,
        before: usize,
        switches: &[NodeId],
        rung: Rung,
        dir: &str,
    ) -> Self {
        let mut ex = ex.only(switches);
        // The summary lists the files present, so `tagger verify
        // --exported` reads a step's directory as it reads an export.
        if let Some(list) = ex.summary["switches"].as_array_mut() {
            list.retain(|sw| {
                sw["node"]
                    .as_u64()
                    .is_some_and(|v| switches.contains(&(v as u32)))
            });
        }
        let cleared: Vec<NodeId> = switches
            .iter()
            .copied()
            .filter(|v| !ex.switches.iter().any(|sw| sw.node == *v))
            .collect();
        ex.summary["update_step"] = json!(before + 1);
        ex.summary["prepare"] = json!(step.is_none());
        ex.summary["cleared"] = json!(cleared);
        ex.summary["classified"] = json!(rung.as_str());
        StepExport {
            step,
            dir: dir.to_string(),
            switches: switches.to_vec(),
            export: ex,
            cleared,
            drain: false,
        }
    }
}

/// The walk of [`Update::export_steps`] through the steps: what the
/// switches run and its read-back, the window of states classified
/// together (exported one at a time as the steps come: a window can hold
/// hundreds of states), and the directories so far.
struct StepWalk<'a, 's> {
    u: &'a Update,
    topo: &'a tagger_generators::Topology,
    /// The installed plan, then the state after each step.
    states: Vec<crate::rules::RuleSet>,
    format: crate::sonic::Format,
    opts: &'a crate::sonic::Options,
    lossless_tcs: u32,
    running: Running,
    before: crate::sonic::ReadBack,
    window: std::collections::VecDeque<(Classification, usize)>,
    /// The weakest rung a window was classified on so far.
    rung: Rung,
    /// Where each directory goes once complete.
    sink: &'s mut dyn FnMut(StepExport) -> Result<()>,
    /// What each switch holds once the directories so far are applied
    /// (SONiC): the base of the next directory's patch.
    held: std::collections::BTreeMap<NodeId, Value>,
    /// The switches' configurations built so far, reused where a state's
    /// classes at a switch are those of its last.
    cache: crate::sonic::SwitchCache,
}

impl StepWalk<'_, '_> {
    /// Adds directory `x`, its patches from what its switches hold. A
    /// SONiC switch it leaves without lossless entries gets its base with
    /// nothing lossless ([`crate::sonic::idle_switches`]), so that nothing
    /// of the plan stays on it.
    fn push(&mut self, mut x: StepExport) -> Result<()> {
        if self.format == crate::sonic::Format::Sonic && !x.cleared.is_empty() {
            let s = &x.export.summary;
            let mapping = crate::sonic::Mapping::from_json(&s["mapping"]).map_err(|cause| {
                crate::Error::Mapping {
                    origin: Some(x.dir.clone()),
                    cause,
                }
            })?;
            let tags = s["tags"].as_u64().unwrap_or(0) as usize;
            let idle =
                crate::sonic::idle_switches(self.topo, &x.cleared, &mapping, tags, self.opts)?;
            let list = x.export.summary["switches"]
                .as_array_mut()
                .expect("an export lists its switches");
            list.extend(idle.iter().map(crate::sonic::switch_entry));
            list.sort_by_key(|e| e["node"].as_u64());
            x.export.switches.extend(idle);
            x.export.switches.sort_by_key(|sw| sw.node);
        }
        let (held, cache) = (&self.held, &self.cache);
        x.rebase(|v| held.get(&v).cloned(), |v| cache.base(v).cloned());
        for sw in &x.export.switches {
            self.held.insert(sw.node, sw.config.clone());
        }
        (self.sink)(x)
    }

    /// The window's next state, exported with its classes.
    fn export_next(&mut self) -> Result<SharedExport> {
        let (c, k) = self
            .window
            .pop_front()
            .expect("a window holds each of its states");
        let (topo, state) = (self.topo, &self.states[k]);
        crate::sonic::build_cached(topo, state, &c, self.format, self.opts, &mut self.cache)
    }

    /// Switches that gain ports: their new ports are bound (lossless
    /// nowhere yet) before the cables carry traffic.
    fn ports(&mut self, first: &SharedExport) -> Result<()> {
        let (c, topo) = (&self.u.correspondence, self.topo);
        let gaining: Vec<NodeId> = first
            .switches
            .iter()
            .map(|s| s.node)
            .filter(|&v| {
                c.old_node.get(v as usize).is_some_and(Option::is_some)
                    && topo
                        .out_channels(v)
                        .iter()
                        .any(|&ch| c.old_link[(ch >> 1) as usize].is_none())
            })
            .collect();
        if !gaining.is_empty() {
            let x = StepExport::of(
                first.clone(),
                None,
                0,
                &gaining,
                Rung::Running,
                "step-0-ports",
            );
            self.push(x)?;
        }
        Ok(())
    }

    /// Opens a window at step `i`: the states up to the next drain,
    /// classified together (packets of any of them may meet) beside what
    /// runs; after a drain nothing the state in place decided is in
    /// flight, before one (the first window) it leads, as a state to pass
    /// through. Classified apart from what runs, the switches whose classes
    /// for the state in place differ take the window's first (tables
    /// unchanged) in a prepare step, so that the steps' classes meet only
    /// classes chosen with them.
    fn open_window(&mut self, i: usize, step: &Step) -> Result<()> {
        let current = !step.drain;
        let (classes, r) = self.classify_window(i, step)?;
        let from = if current { i } else { i + 1 };
        self.window = classes.into_iter().zip(from..).collect();
        self.rung = self.rung.min(r);
        let now = current.then(|| self.export_next()).transpose()?;
        let change = now
            .as_ref()
            .map_or(Vec::new(), |n| self.running.differing(n));
        let Some(now) = now.filter(|_| r != Rung::Running && !change.is_empty()) else {
            return Ok(());
        };
        let label = format!("step-{}-prepare", i + 1);
        let mut after = self.running.clone();
        after.install(&now, &change);
        let (back, drained) = after
            .judged_or_drained(
                self.topo,
                &now.summary,
                &label,
                &self.states[i],
                &self.before,
                false,
            )
            .map_err(|e| crate::Error::Update {
                reason: format!(
                    "step {} needs the traffic classes of switches {change:?} changed first (their tables stay), and that change does not pass the read-back: {e}",
                    i + 1
                ),
            })?;
        let mut x = StepExport::of(now, None, i, &change, self.rung, &label);
        x.drain = drained;
        self.push(x)?;
        self.running = after;
        self.before = back;
        Ok(())
    }

    /// The classes of the window opened at step `i`, and the rung they were
    /// found on.
    fn classify_window(&self, i: usize, step: &Step) -> Result<(Vec<Classification>, Rung)> {
        let steps = &self.u.steps;
        let current = !step.drain;
        let end = (i + 1..steps.len())
            .find(|&j| steps[j].drain)
            .unwrap_or(steps.len());
        let touched: std::collections::BTreeSet<NodeId> = steps[i..end]
            .iter()
            .flat_map(|s| s.switches.iter().copied())
            .collect();
        let from = if current { i } else { i + 1 };
        let classify = |to: usize| {
            window_classes(
                self.topo,
                &self.before.rules.entries,
                &step.switches,
                &touched,
                &self.states[from..=to],
                self.lossless_tcs,
            )
        };
        let mut classes = classify(end)?;
        // A drain window leads with the drained state, not the one in
        // place, so no prepare step moves the untouched switches onto its
        // classes: unless they were chosen beside everything that runs, the
        // drain's state goes alone and the next step opens a window led by
        // it (with its prepare step).
        if !current && classes.1 != Rung::Running && end > from {
            classes = classify(from)?;
        }
        // Past the rungs that guarantee anything (beside or within what
        // runs), a window of fewer states is likelier to be classified
        // soundly: the state in place and this step's.
        if current && classes.1 < Rung::Within && end > from + 1 {
            let pair = classify(from + 1)?;
            if pair.1 > classes.1 {
                classes = pair;
            }
        }
        Ok(classes)
    }

    /// Step `i`'s directory: the step's switches; failing the read-back,
    /// with every switch whose configuration the state changes (one whose
    /// table stays but which now receives, or no longer receives, a
    /// lossless tag). Returns the step's whole export if `keep`.
    fn step(&mut self, i: usize, step: &Step, keep: bool) -> Result<Option<SharedExport>> {
        let topo = self.topo;
        let label = format!("step-{}-{}", i + 1, step.action.as_str());
        // The step's own state, which the switches hold between steps
        // (two-phase: old and new entries side by side), is what is
        // exported and fitted.
        let priorities = self.states[i + 1].priorities;
        let ex = self.export_next().map_err(|e| crate::Error::Update {
            reason: format!(
                "the configuration after step {} ({label}, {priorities} priorities in its entries): {e}",
                i + 1
            ),
        })?;
        let state = &self.states[i + 1];
        let mut switches = step.switches.clone();
        let mut after = self.running.clone();
        after.install(&ex, &switches);
        let before = &self.before;
        let mut judged = after.judged(topo, &ex.summary, &label, state, before, step.drain);
        if judged.is_err() {
            let more: Vec<NodeId> = self
                .running
                .differing(&ex)
                .into_iter()
                .filter(|v| !switches.contains(v))
                .collect();
            if !more.is_empty() {
                switches.extend(more);
                switches.sort_unstable();
                after = self.running.clone();
                after.install(&ex, &switches);
                judged = after.judged(topo, &ex.summary, &label, state, before, step.drain);
            }
        }
        // A drain only where no choice of switches avoids it (the plain
        // judgment already failed: only the drained one is left).
        let judged = match judged {
            Ok(back) => Ok((back, false)),
            Err(e) if step.drain => Err(e),
            Err(e) => after
                .judged(topo, &ex.summary, &label, state, before, true)
                .map(|back| (back, true))
                .map_err(|_| e),
        };
        let (back, drained) = judged.map_err(|e| crate::Error::Update {
            reason: format!(
                "the switches' configuration after step {} ({label}) does not pass the read-back: {e}",
                i + 1
            ),
        })?;
        let whole = keep.then(|| ex.clone());
        let mut x = StepExport::of(ex, Some(i), i, &switches, self.rung, &label);
        x.drain = step.drain || drained;
        self.push(x)?;
        if drained {
            // Nothing decided before is in flight: the next step opens a
            // window beside what runs now.
            self.window.clear();
        }
        self.running = after;
        self.before = back;
        Ok(whole)
    }

    /// After the last step, switches whose tables stayed but whose
    /// arrivals changed still hold classes for tags no longer sent: they
    /// take the final state's classes (`fin`), so that what runs is the
    /// new plan's export.
    fn tidy(&mut self, fin: SharedExport) -> Result<()> {
        let n = self.u.steps.len();
        let tidy = self.running.differing(&fin);
        if tidy.is_empty() {
            return Ok(());
        }
        let label = format!("step-{}-tidy", n + 1);
        self.running.install(&fin, &tidy);
        let (_, drained) = self
            .running
            .judged_or_drained(
                self.topo,
                &fin.summary,
                &label,
                &self.states[n],
                &self.before,
                false,
            )
            .map_err(|e| crate::Error::Update {
                reason: format!(
                    "after the last step, switches {tidy:?} keep classes of the old plan, and giving them the new plan's does not pass the read-back: {e}"
                ),
            })?;
        let mut x = StepExport::of(fin, None, n, &tidy, self.rung, &label);
        x.drain = drained;
        self.push(x)
    }
}
