//! Writing a plan into a switch's base: per port the classification
//! maps, PFC and buffers over what the base held, the base's other tables
//! kept, and the patch from the base ([`switch_config`]).

use super::Options;
use super::base::{PortBase, SwitchBase};
use super::export::{Switch, SwitchFit, cable_text, port_link};
use super::{Mapping, dir};
use crate::capacity::port_headroom_at;
use crate::error::Result;
use crate::tagging::traffic::NodeClasses;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use tagger_generators::{LinkId, NodeId, Topology};

/// Identical maps are written once and shared by name.
#[derive(Default)]
struct Named {
    tables: BTreeMap<&'static str, Map<String, Value>>,
}

impl Named {
    fn name(&mut self, table: &'static str, prefix: &str, m: Map<String, Value>) -> String {
        let t = self.tables.entry(table).or_default();
        let m = Value::Object(m);
        if let Some((k, _)) = t.iter().find(|(_, x)| **x == m) {
            return k.clone();
        }
        let name = format!("TAGGER_{prefix}_{}", t.len());
        t.insert(name.clone(), m);
        name
    }
}

/// A port's leaving maps: TC -> queue, TC -> DSCP, and the queues that
/// leave lossless.
type Leaving = (Map<String, Value>, Map<String, Value>, BTreeSet<u32>);

/// One switch's export: its base, the classes' traffic classes, and the
/// mapping taken. Lookups of the mapping cannot fail (it was checked).
pub(super) struct Plan<'a> {
    pub topo: &'a Topology,
    pub nc: &'a NodeClasses,
    pub opts: &'a Options,
    pub mapping: &'a Mapping,
    pub base: &'a SwitchBase,
    /// Traffic class of class k, at k.
    pub tcs: Vec<u32>,
}

/// One switch's `config_db` (its base with the plan written in), the
/// patch from the base, and its fit.
pub(super) fn switch_config(plan: &Plan<'_>) -> Result<Switch> {
    let mut b = Builder {
        plan,
        named: Named::default(),
        port_qos: Map::new(),
        cable: Map::new(),
        buffer_pg: Map::new(),
        buffer_queue: Map::new(),
        profiles: Map::new(),
        most_queues: 0,
        xoff_sum: 0,
        xon_sum: 0,
    };
    for (i, port) in plan.base.ports.iter().enumerate() {
        b.port(i, port)?;
    }
    b.finish(plan.nc.node)
}

/// The switch's tables as its ports are added.
struct Builder<'a> {
    plan: &'a Plan<'a>,
    named: Named,
    port_qos: Map<String, Value>,
    cable: Map<String, Value>,
    buffer_pg: Map<String, Value>,
    buffer_queue: Map<String, Value>,
    profiles: Map<String, Value>,
    most_queues: u32,
    xoff_sum: u64,
    xon_sum: u64,
}

impl Builder<'_> {
    /// Port `i` (a link port, or past the links a host port): its maps,
    /// PFC, buffers and cable, over what its base held.
    fn port(&mut self, i: usize, pb: &PortBase) -> Result<()> {
        let plan = self.plan;
        let (topo, nc, m) = (plan.topo, plan.nc, plan.mapping);
        let v = nc.node;
        let outs = topo.out_channels(v);
        let link = (i < outs.len()).then(|| outs[i] >> 1);
        // What arrives on this port: from the link's other end, or hosts.
        let from = (i < outs.len()).then(|| outs[i] ^ 1);
        let lossy = &plan.base.lossy;
        let mut d2t = Map::new();
        let mut arriving: BTreeSet<u32> = BTreeSet::new();
        let mut class_of: BTreeMap<u32, u32> = BTreeMap::new();
        for &(f, tag, k) in &nc.ingress {
            if f == from {
                class_of.insert(m.dscp_of(tag)?, plan.tcs[k as usize]);
                arriving.insert(m.queue_of(nc.classes[k as usize].priority)?);
            }
        }
        // Every DSCP: a tag arriving lossless goes to its class; one the
        // base keeps, to its lossy class; any other to the base's default
        // class (DSCP 0's), its DSCP untouched.
        for d in 0..64u32 {
            let tc = match class_of.get(&d) {
                Some(&tc) => tc,
                None if plan.base.tags.contains(&d) => plan.base.untag.unwrap_or(pb.default_tc()),
                None if plan.base.keeps(d) && !pb.lossless(d) => pb.d2t[d as usize],
                None => pb.default_tc(),
            };
            d2t.insert(d.to_string(), json!(tc.to_string()));
        }
        let (tq, td, leaving) = self.leaving(i, link, pb)?;
        let pfc: BTreeSet<u32> = arriving.union(&leaving).copied().collect();
        self.most_queues = self.most_queues.max(pfc.len() as u32);
        let mut t2g = Map::new();
        for &tc in lossy {
            t2g.insert(
                tc.to_string(),
                json!(pb.t2g(plan.base.like(pb, tc)).to_string()),
            );
        }
        for (k, c) in nc.classes.iter().enumerate() {
            t2g.insert(
                plan.tcs[k].to_string(),
                json!(m.queue_of(c.priority)?.to_string()),
            );
        }
        let pfc_text: Vec<String> = pfc.iter().map(u32::to_string).collect();
        let named = &mut self.named;
        // The base's binding, with what classifies and pauses replaced.
        let mut bind = pb.binding.clone();
        bind.insert(
            "dscp_to_tc_map".into(),
            json!(named.name("DSCP_TO_TC_MAP", "DSCP_TO_TC", d2t)),
        );
        bind.insert(
            "tc_to_pg_map".into(),
            json!(named.name("TC_TO_PRIORITY_GROUP_MAP", "TC_TO_PG", t2g)),
        );
        bind.insert(
            "tc_to_queue_map".into(),
            json!(named.name("TC_TO_QUEUE_MAP", "TC_TO_QUEUE", tq)),
        );
        if td.is_empty() {
            bind.remove("tc_to_dscp_map");
        } else {
            bind.insert(
                "tc_to_dscp_map".into(),
                json!(named.name("TC_TO_DSCP_MAP", "TC_TO_DSCP", td)),
            );
        }
        // PFC priority n is priority group n and pauses queue n: carried,
        // not left to the stock maps (which cover 3 and 4 only).
        let ident: Map<String, Value> = (0..8u32)
            .map(|p| (p.to_string(), json!(p.to_string())))
            .collect();
        if bind.contains_key("pfc_to_pg_map") {
            bind.insert(
                "pfc_to_pg_map".into(),
                json!(named.name(
                    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
                    "PFC_TO_PG",
                    ident.clone()
                )),
            );
        }
        bind.insert(
            "pfc_to_queue_map".into(),
            json!(named.name("MAP_PFC_PRIORITY_TO_QUEUE", "PFC_TO_QUEUE", ident)),
        );
        bind.insert("pfc_enable".into(), json!(pfc_text.join(",")));
        bind.insert("pfcwd_sw_enable".into(), json!(pfc_text.join(",")));
        self.port_qos.insert(pb.name.clone(), Value::Object(bind));
        self.buffers(i, pb, &pfc, &leaving)
    }

    /// Leaving port `i`: each class's queue and DSCP (a packet delivered
    /// to a host keeps its tag and leaves in the queue of the priority it
    /// arrived with; hosts only sink traffic, so no cycle runs through
    /// them), the base's lossy classes as they were (no DSCP rewritten);
    /// with the queues that leave lossless.
    fn leaving(&self, i: usize, link: Option<LinkId>, pb: &PortBase) -> Result<Leaving> {
        let plan = self.plan;
        let (nc, m) = (plan.nc, plan.mapping);
        let mut tq = Map::new();
        let mut td = Map::new();
        for &tc in &plan.base.lossy {
            tq.insert(
                tc.to_string(),
                json!(pb.t2q(plan.base.like(pb, tc)).to_string()),
            );
            if link.is_some() && plan.base.untags(tc) {
                td.insert(tc.to_string(), json!("0"));
            } else if let Some(d) = pb.t2d.as_ref().and_then(|x| x.get(&tc)) {
                td.insert(tc.to_string(), json!(d.to_string()));
            }
        }
        let mut leaving: BTreeSet<u32> = BTreeSet::new();
        for (k, c) in nc.classes.iter().enumerate() {
            let tc = plan.tcs[k].to_string();
            match link {
                None => {
                    let q = m.queue_of(c.priority)?;
                    leaving.insert(q);
                    tq.insert(tc, json!(q.to_string()));
                }
                Some(_) => match c.egress[i] {
                    Some((next_tag, next_prio)) => {
                        let q = m.queue_of(next_prio)?;
                        leaving.insert(q);
                        tq.insert(tc.clone(), json!(q.to_string()));
                        td.insert(tc, json!(m.dscp_of(next_tag)?.to_string()));
                    }
                    // Not planned to leave here: lossy, in the default
                    // class's queue, untagged.
                    None => {
                        tq.insert(tc.clone(), json!(pb.t2q(pb.default_tc()).to_string()));
                        td.insert(tc, json!("0"));
                    }
                },
            }
        }
        Ok((tq, td, leaving))
    }

    /// The port's buffers over its base's: every `pfc_enable` priority
    /// group gets the port's lossless profile, every leaving lossless
    /// queue the egress lossless one; the base's other groups and queues
    /// keep theirs (a group or queue the base made lossless and the plan
    /// does not is cleared, or given the base's lossy queue profile); the
    /// port's keys are rewritten as runs of one profile, so none overlaps
    /// another, and under the traditional buffer model the lossless runs
    /// are the keys and profile buildmgrd writes itself.
    fn buffers(
        &mut self,
        i: usize,
        pb: &PortBase,
        pfc: &BTreeSet<u32>,
        leaving: &BTreeSet<u32>,
    ) -> Result<()> {
        let plan = self.plan;
        let (p, base) = (&plan.opts.profile, plan.base);
        let (speed, cable_m) = port_link(plan.topo, plan.nc.node, i, p);
        let cable = cable_text(cable_m);
        // Sized for the length CABLE_LENGTH gives (whole metres, rounded
        // up) and the port's MTU, which is what the switch, and the
        // read-back, size from.
        let h = port_headroom_at(p, speed, cable_m.ceil(), pb.mtu);
        let mut groups: BTreeMap<u32, Option<String>> = pb.pg.clone();
        if !pfc.is_empty() {
            let prof = base.lossless_profile(&pb.speed, &cable, h, p, &mut self.profiles)?;
            let (xoff, xon) =
                profile_headroom(base.profile(&prof, &self.profiles).unwrap_or(&Value::Null));
            for &g in pfc {
                groups.insert(g, Some(prof.clone()));
                self.xoff_sum += xoff;
                self.xon_sum += xon;
            }
        }
        for (g, prof) in groups.iter_mut() {
            if !pfc.contains(g) && prof.as_deref().is_some_and(|x| base.reserves_headroom(x)) {
                *prof = None;
            }
        }
        for (key, prof) in runs(&pb.name, &groups) {
            self.buffer_pg.insert(key, json!({ "profile": prof }));
        }
        let mut queues: BTreeMap<u32, Option<String>> = pb.queue.clone();
        for (q, prof) in queues.iter_mut() {
            if !leaving.contains(q) && prof.as_deref().is_some_and(|x| base.egress_lossless(x)) {
                *prof = pb.lossy_queue.clone();
            }
        }
        if !leaving.is_empty() {
            let prof = base.egress_profile(&mut self.profiles);
            for &q in leaving {
                queues.insert(q, Some(prof.clone()));
            }
        }
        for (key, prof) in runs(&pb.name, &queues) {
            self.buffer_queue.insert(key, json!({ "profile": prof }));
        }
        self.cable.insert(pb.name.clone(), json!(cable));
        Ok(())
    }

    /// The switch's `config_db`: its base with the plan's tables written
    /// over its ports, maps and profiles it no longer uses of tagger's
    /// removed; the patch from the base; the fit.
    fn finish(self, v: NodeId) -> Result<Switch> {
        let plan = self.plan;
        let p = &plan.opts.profile;
        let mut db = plan.base.db.clone();
        let obj = db.as_object_mut().expect("a base is an object");
        let table = |obj: &mut Map<String, Value>, t: &str| -> Map<String, Value> {
            obj.remove(t)
                .and_then(|x| match x {
                    Value::Object(m) => Some(m),
                    _ => None,
                })
                .unwrap_or_default()
        };
        let ours: BTreeSet<&str> = plan.base.ports.iter().map(|x| x.name.as_str()).collect();
        let on_ours = |k: &str| ours.contains(k.split('|').next().unwrap_or(k));
        for (t, fresh) in [
            ("BUFFER_PG", self.buffer_pg),
            ("BUFFER_QUEUE", self.buffer_queue),
        ] {
            let mut m = table(obj, t);
            m.retain(|k, _| !on_ours(k));
            m.extend(fresh);
            obj.insert(t.into(), Value::Object(m));
        }
        let mut qos = table(obj, "PORT_QOS_MAP");
        qos.extend(self.port_qos);
        obj.insert("PORT_QOS_MAP".into(), Value::Object(qos));
        let mut profiles = table(obj, "BUFFER_PROFILE");
        profiles.extend(self.profiles);
        obj.insert("BUFFER_PROFILE".into(), Value::Object(profiles));
        for (t, m) in self.named.tables {
            let mut old = table(obj, t);
            old.retain(|k, _| !k.starts_with("TAGGER_"));
            old.extend(m);
            obj.insert(t.into(), Value::Object(old));
        }
        let cable_table = obj["CABLE_LENGTH"]
            .as_object()
            .and_then(|m| m.keys().next().cloned())
            .unwrap_or_else(|| "AZURE".into());
        let mut cl = table(obj, "CABLE_LENGTH");
        let mut lengths = cl
            .remove(&cable_table)
            .and_then(|x| x.as_object().cloned())
            .unwrap_or_default();
        lengths.extend(self.cable);
        cl.insert(cable_table, Value::Object(lengths));
        obj.insert("CABLE_LENGTH".into(), Value::Object(cl));
        collect_unused(obj);
        obj.retain(|_, t| t.as_object().is_none_or(|m| !m.is_empty()));
        let patch = json_patch::diff(&plan.base.db, &db);
        let headroom_bytes = crate::capacity::reserve(p, self.xoff_sum, self.xon_sum);
        let most_queues = self.most_queues;
        Ok(Switch {
            node: v,
            config: db,
            base: Some(plan.base.db.clone()),
            patch: Some(serde_json::to_value(&patch).expect("a patch serialises")),
            tcs: plan.nc.classes.len(),
            fit: Some(SwitchFit {
                lossless_queues: most_queues,
                headroom_bytes,
                fits: most_queues <= p.lossless_queues && headroom_bytes <= p.lossless_buffer_bytes,
            }),
        })
    }
}

/// Keys `port|n` or `port|lo-hi` for each run of consecutive numbers with
/// one profile (numbers without one get no key).
fn runs(port: &str, of: &BTreeMap<u32, Option<String>>) -> Vec<(String, String)> {
    let mut out: Vec<(u32, u32, String)> = Vec::new();
    for (&n, prof) in of {
        let Some(prof) = prof else { continue };
        match out.last_mut() {
            Some((_, hi, p)) if *hi + 1 == n && p == prof => *hi = n,
            _ => out.push((n, n, prof.clone())),
        }
    }
    out.into_iter()
        .map(|(lo, hi, p)| {
            let key = if lo == hi {
                format!("{port}|{lo}")
            } else {
                format!("{port}|{lo}-{hi}")
            };
            (key, p)
        })
        .collect()
}

/// xoff and xon a lossless profile holds.
fn profile_headroom(prof: &Value) -> (u64, u64) {
    let n = |k: &str| dir::number(&prof[k]).map_or(0, u64::from);
    (n("xoff"), n("xon"))
}

/// Removes the maps and buffer profiles of tagger's (`TAGGER_*`) that
/// nothing references any more: what an earlier install left.
fn collect_unused(obj: &mut Map<String, Value>) {
    let mut used: BTreeSet<String> = BTreeSet::new();
    for t in ["PORT_QOS_MAP", "BUFFER_PG", "BUFFER_QUEUE"] {
        for e in obj.get(t).and_then(Value::as_object).into_iter().flatten() {
            for (_, x) in e.1.as_object().into_iter().flatten() {
                if let Some(s) = x.as_str() {
                    used.insert(s.to_string());
                }
            }
        }
    }
    for (t, m) in obj.iter_mut() {
        if (t.ends_with("_MAP") && t != "PORT_QOS_MAP" || t == "BUFFER_PROFILE")
            && let Some(m) = m.as_object_mut()
        {
            m.retain(|k, _| !k.starts_with("TAGGER_") || used.contains(k));
        }
    }
}
