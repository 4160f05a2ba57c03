use super::*;

/// The independent judgement: does the exported directory keep its
/// promise and run every ELP path losslessly, deadlock-free?
pub(crate) fn switch_would_run(topo: &Topology, dir: &std::path::Path, paths: &[Vec<u32>]) -> bool {
    judge(topo, dir, paths).is_ok()
}

pub(crate) fn judge(
    topo: &Topology,
    dir: &std::path::Path,
    paths: &[Vec<u32>],
) -> Result<(), Broken> {
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let sonic = summary["format"] == json!(tagger::sonic::FORMAT);
    let most_tag = num(&summary["tags"]).unwrap();
    let host_tags: Vec<u32> = match summary["classes"].as_array() {
        Some(a) if !a.is_empty() => a.iter().map(|x| num(x).unwrap()).collect(),
        _ => vec![num(&summary["initial_tag"]).unwrap()],
    };
    let s = if sonic {
        let list = |k: &str| -> Vec<u32> {
            summary["mapping"][k]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| num(x).unwrap())
                .collect()
        };
        let (dscp, queues) = (list("dscp_of_tag"), list("queue_of_priority"));
        let host_values = host_tags.iter().map(|&t| dscp[t as usize - 1]).collect();
        let d2 = dscp.clone();
        Summary {
            tag_of: Box::new(move |d| {
                d2.iter()
                    .position(|&x| x == d)
                    .map(|i| i as u32 + 1)
                    .filter(|&t| t <= most_tag)
            }),
            priority_of: Box::new(move |q| {
                queues.iter().position(|&x| x == q).map(|i| i as u32 + 1)
            }),
            host_values,
            host_tags: host_tags.clone(),
            priorities: num(&summary["priorities"]).unwrap(),
        }
    } else {
        Summary {
            tag_of: Box::new(move |x| (x > 0 && x <= most_tag).then_some(x)),
            priority_of: Box::new(|g| (g > 0).then_some(g)),
            host_values: host_tags.clone(),
            host_tags: host_tags.clone(),
            priorities: num(&summary["priorities"]).unwrap(),
        }
    };
    let profile: Option<toml::Table> = summary["switch_profile"].as_str().map(|t| {
        let doc: toml::Table = toml::from_str(t).unwrap();
        doc.values().next().unwrap().as_table().unwrap().clone()
    });
    let tag_values: BTreeSet<u32> = summary["mapping"]["dscp_of_tag"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(num)
        .collect();
    let mut models: BTreeMap<u32, Model> = BTreeMap::new();
    // Every switch file present is loaded on its switch, listed or not.
    let listed: BTreeSet<String> = summary["switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sw| format!("{}.json", sw["node"]))
        .collect();
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let numeric = name
            .strip_suffix(".json")
            .is_some_and(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()));
        if numeric && !listed.contains(&name) {
            return broken(format!("{name} is not listed"));
        }
    }
    for sw in summary["switches"].as_array().unwrap() {
        let v = num(&sw["node"]).unwrap();
        if !sw["file"].is_null() && sw["file"] != json!(format!("{v}.json")) {
            return broken(format!("node {v}: summary names file {}", sw["file"]));
        }
        let Ok(text) = std::fs::read_to_string(dir.join(format!("{v}.json"))) else {
            return broken(format!("node {v}: listed, no file"));
        };
        let db: Value = match serde_json::from_str(&text) {
            Ok(x) => x,
            Err(_) => return broken(format!("node {v}: not JSON")),
        };
        let m = match &profile {
            Some(p) => sonic_switch(v, &db, p)?,
            None => table_switch(v, &db)?,
        };
        // The summary's per-switch counts agree.
        let classes = m.leave.keys().filter(|&&k| k != 0).count() as u32;
        let (key, want) = if sonic {
            (
                "tcs",
                // Lossless classes of the tags' DSCP values (another one
                // classified lossless is judged on its own).
                m.arrive
                    .values()
                    .flat_map(|row| row.iter().enumerate())
                    .filter(|(d, a)| a.group.is_some() && tag_values.contains(&(*d as u32)))
                    .map(|(_, a)| a.class)
                    .collect::<BTreeSet<_>>()
                    .len() as u32,
            )
        } else {
            ("classes", classes)
        };
        if num(&sw[key]) != Some(want) {
            return broken(format!("node {v}: summary {key}"));
        }
        if !sonic && num(&sw["entries"]) != db["entries"].as_array().map(|a| a.len() as u32) {
            return broken(format!("node {v}: summary entries"));
        }
        models.insert(v, m);
    }
    let peer = |v: u32, l: u32| {
        let [a, b] = topo.links()[l as usize];
        if a == v { b } else { a }
    };
    let channel = |from: u32, l: u32| -> u32 {
        let [a, _] = topo.links()[l as usize];
        2 * l + u32::from(a != from)
    };
    // How switch w takes value x over link l.
    let at = |w: u32, l: u32, x: u32| -> Option<Arrive> {
        let m = models.get(&w)?;
        let port = m.ports.iter().find(|(_, k)| **k == Some(l))?.0;
        m.arrive[port].get(x as usize).copied()
    };
    let mut edges: BTreeSet<((u32, u32), (u32, u32))> = BTreeSet::new();
    let mut used = 0;
    for (&v, m) in &models {
        // Per header value: its group and what leaves on each link.
        type HostView = Vec<(u32, Option<u32>, Vec<(u32, Leave)>)>;
        let mut host_view: Option<HostView> = None;
        for (name, &link) in &m.ports {
            let mut view = Vec::new();
            for (x, a) in m.arrive[name].iter().enumerate() {
                let x = x as u32;
                let row = &m.leave[&a.class];
                if let Some(g) = a.group {
                    let Some(tag) = (s.tag_of)(x) else {
                        return broken(format!("node {v}: {name}: {x} lossless, no tag"));
                    };
                    let Some(p) = (s.priority_of)(g) else {
                        return broken(format!("node {v}: {name}: group {g} not lossless"));
                    };
                    if link.is_none() && !s.host_tags.contains(&tag) {
                        return broken(format!("node {v}: host port takes tag {tag}"));
                    }
                    // Delivered to hosts in a paused queue of its group.
                    for (h, hl) in &m.ports {
                        if hl.is_none() {
                            let out = row[h];
                            if !(out.paused && out.queue == g) {
                                return broken(format!("node {v}: delivery at {h}"));
                            }
                        }
                    }
                    used = used.max(p);
                }
                let mut outs = Vec::new();
                for (o, &ol) in &m.ports {
                    let Some(lo) = ol else { continue };
                    let out = row[o];
                    outs.push((lo, out));
                    let x2 = out.value.unwrap_or(x);
                    let w = peer(v, lo);
                    let there = at(w, lo, x2);
                    let Some(gw) = there.and_then(|t| t.group) else {
                        continue;
                    };
                    if !(out.paused && out.queue == gw) {
                        return broken(format!(
                            "node {v} -> {w} on link {lo}: {x2} arrives in {gw} from queue {} (paused {})",
                            out.queue, out.paused
                        ));
                    }
                    let Some(g) = a.group else { continue };
                    let (p, p2) = ((s.priority_of)(g).unwrap(), (s.priority_of)(gw).unwrap());
                    if p2 < p {
                        return broken(format!("node {v}: priority {p} -> {p2}"));
                    }
                    used = used.max(p2);
                    if (s.tag_of)(x2).is_none() {
                        return broken(format!("node {w}: {x2} lossless, no tag"));
                    }
                    if let Some(l) = link {
                        edges.insert(((channel(w_of(topo, v, l), l), g), (channel(v, lo), gw)));
                    }
                }
                // Dependencies through a paused queue whose group at the
                // next switch is lossless for other packets.
                if let (Some(g), Some(l)) = (a.group, link) {
                    for (o, &ol) in &m.ports {
                        let Some(lo) = ol else { continue };
                        let out = row[o];
                        if !out.paused {
                            continue;
                        }
                        let w = peer(v, lo);
                        let lossless_there = models.get(&w).is_some_and(|wm| {
                            wm.ports
                                .iter()
                                .find(|(_, k)| **k == Some(lo))
                                .is_some_and(|(wp, _)| {
                                    wm.arrive[wp].iter().any(|a| a.group == Some(out.queue))
                                })
                        });
                        if lossless_there {
                            edges.insert((
                                (channel(w_of(topo, v, l), l), g),
                                (channel(v, lo), out.queue),
                            ));
                        }
                    }
                }
                if link.is_none() {
                    view.push((x, a.group, outs));
                }
            }
            if link.is_none() {
                match &host_view {
                    None => host_view = Some(view),
                    Some(h) if *h != view => return broken(format!("node {v}: host ports differ")),
                    Some(_) => {}
                }
            }
        }
    }
    if used != 0 && used != s.priorities {
        return broken(format!("{used} priorities in use"));
    }
    // Kahn's algorithm over the dependency graph.
    let mut indeg: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut next: BTreeMap<(u32, u32), Vec<(u32, u32)>> = BTreeMap::new();
    for &(a, b) in &edges {
        indeg.entry(a).or_default();
        *indeg.entry(b).or_default() += 1;
        next.entry(a).or_default().push(b);
    }
    let mut ready: Vec<(u32, u32)> = indeg
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(k, _)| *k)
        .collect();
    let mut done = 0;
    while let Some(x) = ready.pop() {
        done += 1;
        for y in next.get(&x).into_iter().flatten() {
            let d = indeg.get_mut(y).unwrap();
            *d -= 1;
            if *d == 0 {
                ready.push(*y);
            }
        }
    }
    if done != indeg.len() {
        return broken("a cycle".into());
    }
    // Every ELP path, from every host port of its first switch.
    for p in paths {
        let Some(first) = models.get(&p[0]) else {
            return broken(format!("path {p:?}: no file"));
        };
        for (host, hl) in &first.ports {
            if hl.is_some() {
                continue;
            }
            let mut x = s.host_values[0];
            let mut port = host.clone();
            for (i, &v) in p.iter().enumerate() {
                let m = models
                    .get(&v)
                    .ok_or_else(|| Broken(format!("path {p:?}: no file for {v}")))?;
                let a = m.arrive[&port][x as usize];
                if a.group.is_none() {
                    return broken(format!("path {p:?}: lossy at {v}"));
                }
                if i + 1 == p.len() {
                    break;
                }
                let (o, lo) = m
                    .ports
                    .iter()
                    .find_map(|(n, &l)| l.filter(|&l| peer(v, l) == p[i + 1]).map(|l| (n, l)))
                    .unwrap();
                let out = m.leave[&a.class][o];
                if !out.paused {
                    return broken(format!("path {p:?}: lossy out of {v}"));
                }
                x = out.value.unwrap_or(x);
                let w = p[i + 1];
                port = models
                    .get(&w)
                    .and_then(|wm| wm.ports.iter().find(|(_, k)| **k == Some(lo)))
                    .map(|(n, _)| n.clone())
                    .ok_or_else(|| Broken(format!("path {p:?}: no file for {w}")))?;
            }
        }
    }
    Ok(())
}
