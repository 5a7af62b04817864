//! Assembly: tagged items → structured queries (readings). Relation cues pick metaedges by
//! the types at their ends; chains, intersections, cycles and bridges through the pair
//! relation; alternatives from ambiguous phrases.

use serenqa_graph::{Graph, NodeId, RelId, TypeId};

use super::lexicon::Sense;
use super::linking::{Item, Match, Mention, Understander, MAX_READINGS};
use crate::offline::retrieval::{Except, PNode, Parse};

/// A scored (candidate, sense) pair: (match kind, fit, …) rank, the object node and type, the
/// sense.
type SenseChoice = (
    (u8, usize, u8, usize),
    Option<NodeId>,
    Option<TypeId>,
    Sense,
);

impl Understander {
    pub(super) fn rel_fits(
        &self,
        g: &Graph,
        s: Sense,
        a: Option<TypeId>,
        b: Option<TypeId>,
    ) -> bool {
        let ok = |want: Option<TypeId>, have: Option<TypeId>| {
            want.is_none() || have.is_none() || want == have
        };
        self.ends(g, s.rel)
            .iter()
            .any(|&(src, tgt)| (ok(a, src) && ok(b, tgt)) || (ok(a, tgt) && ok(b, src)))
    }

    /// A relation's (source type, target type) pairs: the loader's fixed types, else the
    /// ones its edges join (most edges first), else unknown.
    pub(super) fn ends(&self, g: &Graph, r: RelId) -> Vec<(Option<TypeId>, Option<TypeId>)> {
        let rt = g.relation(r);
        if rt.source_type.is_some() && rt.target_type.is_some() {
            return vec![(rt.source_type, rt.target_type)];
        }
        let seen: Vec<_> = self.meta.ends(r).iter().map(|e| (e.0, e.1)).collect();
        if seen.is_empty() {
            vec![(rt.source_type, rt.target_type)]
        } else {
            seen
        }
    }

    /// Whether an edge of relation `r` runs from the subject (type `st`) to the object (type
    /// `ot`); a same-type relation reads subject → object unless the sense is reversed (or
    /// the subject came after its verb, `flip`).
    fn forward(
        &self,
        g: &Graph,
        s: Sense,
        st: Option<TypeId>,
        ot: Option<TypeId>,
        flip: bool,
    ) -> bool {
        let ends = self.ends(g, s.rel);
        if let [(src, tgt)] = ends.as_slice() {
            return if src == tgt {
                s.reversed == flip
            } else {
                *src == st
            };
        }
        if let Some((src, tgt)) = ends.iter().find(|e| e.0 == st && e.1 == ot) {
            return if src == tgt { s.reversed == flip } else { true };
        }
        if ends.iter().any(|e| e.0 == ot && e.1 == st) {
            return false;
        }
        s.reversed == flip
    }

    /// Builds readings from the tagged items, each leaving out the `excepted` mentions; the
    /// first is the main one.
    pub(super) fn assemble(
        &self,
        g: &Graph,
        items: &[Item],
        mentions: &[Mention],
        excepted: &[(usize, Option<usize>)],
    ) -> (Vec<Parse>, Vec<Vec<(usize, NodeId)>>) {
        // Alternative k takes the k-th fitting sense of every ambiguous phrase (the first that exists).
        let mut readings = Vec::new();
        let mut chosen = Vec::new();
        for alt in 0..MAX_READINGS {
            let Some((mut p, mut c)) = self.assemble_one(g, items, mentions, alt) else {
                continue;
            };
            self.leave_out(g, &mut p, &mut c, mentions, excepted);
            if !p.edges.is_empty() && !readings.contains(&p) {
                readings.push(p);
                chosen.push(c);
            }
        }
        (readings, chosen)
    }

    /// Leaves the `excepted` mentions out of a reading's answers. With a relation phrase
    /// ("that do not cause drowsiness") the answers the phrase joins to the mention's best
    /// fitting candidate are left out. Without one, a mention with a candidate of the answer's
    /// type leaves out that node — every such node when the name only contains the words
    /// ("besides diabetes": both types of diabetes mellitus); otherwise the first candidate of
    /// a type the answer pairs with leaves out the answers joined to it ("other than
    /// corticosteroids": the drugs in that class). A mention that fits no way is not used.
    fn leave_out(
        &self,
        g: &Graph,
        p: &mut Parse,
        chosen: &mut Vec<(usize, NodeId)>,
        mentions: &[Mention],
        excepted: &[(usize, Option<usize>)],
    ) {
        let Some(PNode::Var(t)) = p.nodes.first().cloned() else {
            return;
        };
        for &(m, phrase) in excepted {
            let cands = &mentions[m].candidates;
            if let Some(r) = phrase {
                // The best match kind whose candidate a sense of the phrase fits; the
                // linking order among equals.
                let fitting = cands
                    .iter()
                    .filter_map(|c| {
                        let ct = g.node_type(c.node);
                        let s = self.lex.phrases[r]
                            .1
                            .iter()
                            .find(|s| self.rel_fits(g, **s, Some(t), Some(ct)))?;
                        Some((c.how, s.rel, c.node))
                    })
                    .min_by_key(|x| x.0);
                if let Some((_, rel, n)) = fitting {
                    if !p.except.contains(&Except::LinkedTo(rel, n)) {
                        p.except.push(Except::LinkedTo(rel, n));
                        chosen.push((m, n));
                    }
                    continue;
                }
            }
            let of_answer: Vec<_> = cands.iter().filter(|c| g.node_type(c.node) == t).collect();
            if let Some(best) = of_answer.iter().map(|c| c.how).min() {
                let take: Vec<NodeId> = if best == Match::Contains {
                    of_answer.iter().map(|c| c.node).collect()
                } else {
                    of_answer
                        .iter()
                        .find(|c| c.how == best)
                        .map(|c| c.node)
                        .into_iter()
                        .collect()
                };
                for n in take {
                    if !p.except.contains(&Except::Node(n)) {
                        p.except.push(Except::Node(n));
                        chosen.push((m, n));
                    }
                }
                continue;
            }
            // The best match kind; the linking order among equals.
            let linked = cands
                .iter()
                .filter_map(|c| {
                    let r = *self.lex.pairs.get(&(t, g.node_type(c.node)))?;
                    Some((c.how, r, c.node))
                })
                .min_by_key(|x| x.0);
            if let Some((_, r, n)) = linked {
                if !p.except.contains(&Except::LinkedTo(r, n)) {
                    p.except.push(Except::LinkedTo(r, n));
                    chosen.push((m, n));
                }
            }
        }
    }

    fn assemble_one(
        &self,
        g: &Graph,
        items: &[Item],
        mentions: &[Mention],
        alt: usize,
    ) -> Option<(Parse, Vec<(usize, NodeId)>)> {
        // Variables: types (None until a relation fixes it); node 0 is the answer.
        // The answer is the first type noun, unless a relation phrase comes first ("side
        // effects of drugs that …" is a phrase; its answer type follows from the relation).
        let answer_at = items
            .iter()
            .position(|it| matches!(it, Item::Noun(_)))
            .filter(|&i| {
                !matches!(items.first(), Some(Item::Rel(_)))
                    || items[..i].iter().any(|x| matches!(x, Item::Ent(_)))
            });
        let mut vars: Vec<Option<TypeId>> = vec![answer_at.and_then(|i| {
            if let Item::Noun(t) = items[i] {
                Some(t)
            } else {
                None
            }
        })];
        #[derive(Clone, Copy)]
        enum End {
            Var(usize),
            Ent(usize),
        }
        // Pending edges: (subject var, phrase or None, object).
        let mut edges: Vec<(usize, Option<usize>, End, bool)> = Vec::new();
        let mut cur = 0usize;
        let mut pending_rel: Option<usize> = None;
        let mut pending_ents: Vec<usize> = Vec::new();
        let mut pending_vars: Vec<usize> = Vec::new();
        let mut last_rel: Option<(usize, Option<usize>)> = None;
        let mut skip_noun = false;
        for (k, it) in items.iter().enumerate() {
            if Some(k) == answer_at {
                continue;
            }
            if skip_noun && matches!(it, Item::Noun(_)) {
                skip_noun = false;
                continue;
            }
            match *it {
                Item::Ent(m) => {
                    if let (Some(r), Some(Item::Noun(t))) = (pending_rel, items.get(k + 1)) {
                        // "… interact with obesity genes": the name qualifies the noun after
                        // it; the verb's object is a variable of that type, joined to the name
                        // by the pair relation.
                        if Some(k + 1) != answer_at {
                            pending_rel = None;
                            vars.push(Some(*t));
                            let v = vars.len() - 1;
                            edges.push((v, None, End::Ent(m), false));
                            edges.push((cur, Some(r), End::Var(v), false));
                            last_rel = None;
                            skip_noun = true;
                            continue;
                        }
                    }
                    if let Some(r) = pending_rel.take() {
                        edges.push((cur, Some(r), End::Ent(m), false));
                        last_rel = Some((cur, Some(r)));
                    } else if let Some((v, r)) = last_rel {
                        edges.push((v, r, End::Ent(m), false));
                    } else {
                        pending_ents.push(m);
                    }
                }
                Item::Rel(r) if !pending_vars.is_empty() => {
                    for v in pending_vars.drain(..) {
                        edges.push((cur, Some(r), End::Var(v), false));
                    }
                    last_rel = Some((cur, Some(r)));
                }
                Item::Rel(r) => {
                    // Names before a verb that has its own object ("drugs for X that cause
                    // Y") join the answer without a verb; else the verb is theirs ("what
                    // genes does X bind").
                    // A verb followed by a type noun opens a chain ("drugs for X that bind
                    // genes …"): the names before it are not its object either.
                    let has_object = matches!(items.get(k + 1), Some(Item::Ent(_) | Item::Noun(_)))
                        && answer_at.is_some_and(|a| a < k);
                    if has_object && !pending_ents.is_empty() {
                        for m in pending_ents.drain(..) {
                            edges.push((cur, None, End::Ent(m), false));
                        }
                    }
                    if !pending_ents.is_empty() {
                        // The names are the verb's subject ("which genes does TP53
                        // regulate"): a same-type relation reads from them to the answer.
                        for m in pending_ents.drain(..) {
                            edges.push((cur, Some(r), End::Ent(m), true));
                        }
                        last_rel = Some((cur, Some(r)));
                    } else {
                        pending_rel = Some(r);
                    }
                }
                // Exception markers left the items in tagging.
                Item::Except | Item::Encodes(_) => {}
                Item::Noun(t) => {
                    if let Some(r) = pending_rel.take() {
                        vars.push(Some(t));
                        let v = vars.len() - 1;
                        edges.push((cur, Some(r), End::Var(v), false));
                        cur = v;
                        last_rel = None;
                    } else if !pending_ents.is_empty() {
                        // "hypertension drugs": a variable of that type joined to the names
                        // before it by the pair relation, waiting for the verb that joins it
                        // to the answer.
                        vars.push(Some(t));
                        let v = vars.len() - 1;
                        for m in pending_ents.drain(..) {
                            edges.push((v, None, End::Ent(m), false));
                        }
                        pending_vars.push(v);
                    } else if answer_at.is_some_and(|a| a < k)
                        && matches!(items.get(k - 1), Some(Item::Noun(_)))
                    {
                        // "pathways of genes associated with X": a second type noun right after
                        // the first opens a chain joined by the pair relation of the two types.
                        vars.push(Some(t));
                        let v = vars.len() - 1;
                        edges.push((cur, None, End::Var(v), false));
                        cur = v;
                        last_rel = None;
                    }
                }
            }
        }
        for m in pending_ents.drain(..) {
            edges.push((cur, None, End::Ent(m), false));
        }
        for v in pending_vars.drain(..) {
            edges.push((cur, None, End::Var(v), false));
        }
        if edges.is_empty() {
            return None;
        }
        // Resolve: per edge, the entity's candidate and the relation sense.
        let mut nodes: Vec<PNode> = Vec::new();
        let mut index_of_var: Vec<Option<usize>> = vec![None; vars.len()];
        let mut out_edges = Vec::new();
        let mut chosen = Vec::new();
        let mut used_alt = alt == 0;
        // Answer var first.
        nodes.push(PNode::Var(vars[0].unwrap_or(0)));
        index_of_var[0] = Some(0);
        let mut queue: std::collections::VecDeque<(usize, Option<usize>, End, bool)> = edges.into();
        let mut bridges = 0usize;
        while let Some((subj, rel, obj, flip)) = queue.pop_front() {
            let st = vars[subj];
            let senses: Vec<Sense> = match rel {
                Some(r) => self.lex.phrases[r].1.clone(),
                None => Vec::new(),
            };
            // Object candidates: an entity's candidates or the variable's type.
            let obj_options: Vec<(Option<NodeId>, Option<TypeId>, Match)> = match obj {
                End::Var(v) => vec![(None, vars[v], Match::Exact)],
                End::Ent(m) => mentions[m]
                    .candidates
                    .iter()
                    .map(|c| (Some(c.node), Some(g.node_type(c.node)), c.how))
                    .collect(),
            };
            // Score every (candidate, sense) pair: match kind, then fit, then candidate order.
            let mut best: Option<SenseChoice> = None;
            let mut fitting_senses: Vec<Sense> = Vec::new();
            for (ci, (node, ot, how)) in obj_options.iter().enumerate() {
                // No verb, but the two types' juxtaposition means something other than
                // their pair relation ("drugs for nausea" asks for a treatment).
                let bare = match (st, *ot) {
                    (Some(a), Some(b)) if rel.is_none() => self.lex.bare.get(&(a, b)),
                    _ => None,
                };
                let fit: Vec<Sense> = if let Some(bare) = bare {
                    bare.iter()
                        .copied()
                        .filter(|s| self.rel_fits(g, *s, st, *ot))
                        .collect()
                } else if senses.is_empty() {
                    match (st, *ot) {
                        (Some(a), Some(b)) => self
                            .lex
                            .pairs
                            .get(&(a, b))
                            .map(|&r| {
                                vec![Sense {
                                    rel: r,
                                    reversed: false,
                                }]
                            })
                            .unwrap_or_default(),
                        (None, Some(b)) => self.default_from(g, b),
                        _ => Vec::new(),
                    }
                } else {
                    let f: Vec<Sense> = senses
                        .iter()
                        .copied()
                        .filter(|s| self.rel_fits(g, *s, st, *ot))
                        .collect();
                    if f.is_empty() {
                        // The phrase fits nothing here: the pair's own relation — unless the
                        // phrase asks for a link the graph never holds for this type (a
                        // treatment for a side effect is not what causes it).
                        match (st, *ot) {
                            (a, Some(b))
                                if self.lex.never_holds(&senses, b)
                                    || a.is_some_and(|a| self.lex.never_holds(&senses, a)) =>
                            {
                                Vec::new()
                            }
                            (Some(a), Some(b)) => self
                                .lex
                                .pairs
                                .get(&(a, b))
                                .map(|&r| {
                                    vec![Sense {
                                        rel: r,
                                        reversed: false,
                                    }]
                                })
                                .unwrap_or_default(),
                            _ => Vec::new(),
                        }
                    } else {
                        f
                    }
                };
                if fit.is_empty() {
                    continue;
                }
                let pick = fit[0];
                let phrase_fit = senses.is_empty() || senses.contains(&pick);
                // With no verb, the lexicon's pair order decides between types ("migraine
                // medicines": the disease, not the side effect of the same name).
                let pair = if senses.is_empty() {
                    self.pair_rank(pick.rel)
                } else {
                    0
                };
                let key = (u8::from(!phrase_fit), pair, *how as u8, ci);
                if best.as_ref().is_none_or(|b| key < b.0) {
                    best = Some((key, *node, *ot, pick));
                    fitting_senses = fit;
                }
            }
            let Some((_, node, ot, mut sense)) = best else {
                // Nothing fits: bridge through the type the relation wants, joined by the
                // lexicon's pair relation ("side effects of benzodiazepines": of the drugs in
                // that class; "drug classes that treat epilepsy": classes of drugs that do).
                let obj_types: Vec<TypeId> = obj_options.iter().filter_map(|o| o.1).collect();
                let bridge = (bridges < 3)
                    .then(|| self.bridge(g, &senses, st, &obj_types))
                    .flatten();
                let (want, on_subject) = bridge?;
                bridges += 1;
                vars.push(Some(want));
                index_of_var.push(None);
                let w = vars.len() - 1;
                if on_subject {
                    queue.push_front((w, rel, obj, flip));
                    queue.push_front((subj, None, End::Var(w), false));
                } else {
                    queue.push_front((w, None, obj, false));
                    queue.push_front((subj, rel, End::Var(w), flip));
                }
                continue;
            };
            if alt > 0 && alt < fitting_senses.len() {
                sense = fitting_senses[alt];
                used_alt = true;
            }
            // Fix the subject's type from the relation if it was open.
            let ends = self.ends(g, sense.rel);
            let st = st.or_else(|| {
                let (a, b) = ends
                    .iter()
                    .find(|e| e.0 == ot || e.1 == ot)
                    .or(ends.first())
                    .copied()
                    .unwrap_or((None, None));
                if ot == a {
                    b
                } else {
                    a
                }
            });
            vars[subj] = st;
            let si = match index_of_var[subj] {
                Some(i) => {
                    if let (PNode::Var(_), Some(t)) = (&nodes[i], st) {
                        nodes[i] = PNode::Var(t);
                    }
                    i
                }
                None => {
                    nodes.push(PNode::Var(st?));
                    index_of_var[subj] = Some(nodes.len() - 1);
                    nodes.len() - 1
                }
            };
            let oi = match (obj, node) {
                (End::Ent(m), Some(n)) => {
                    chosen.push((m, n));
                    match nodes.iter().position(|x| *x == PNode::Entity(n)) {
                        Some(i) => i,
                        None => {
                            nodes.push(PNode::Entity(n));
                            nodes.len() - 1
                        }
                    }
                }
                (End::Var(v), _) => match index_of_var[v] {
                    Some(i) => i,
                    None => {
                        nodes.push(PNode::Var(vars[v]?));
                        index_of_var[v] = Some(nodes.len() - 1);
                        nodes.len() - 1
                    }
                },
                _ => return None,
            };
            // Orientation: the relation's source type is the source; same-type relations read
            // subject → object unless the sense is reversed.
            let forward = self.forward(g, sense, st, ot, flip);
            let edge = if forward {
                (si, sense.rel, oi)
            } else {
                (oi, sense.rel, si)
            };
            // The same link named twice ("eczema drugs atopic dermatitis", two names of one
            // disease) is one pattern edge: Cypher never matches one relationship twice.
            if !out_edges.contains(&edge) {
                out_edges.push(edge);
            }
        }
        if !used_alt {
            return None;
        }
        if matches!(nodes[0], PNode::Var(_)) && vars[0].is_none() {
            return None;
        }
        Some((
            Parse {
                nodes,
                edges: out_edges,
                except: Vec::new(),
                only: None,
                groups: Vec::new(),
            },
            chosen,
        ))
    }

    /// A type to bridge an edge through when no sense of its phrase fits the subject type `st`
    /// and the object types: `(type, true)` puts the bridge on the subject side (the
    /// relation joins the bridge and the object; the pair relation joins subject and bridge),
    /// `(type, false)` on the object side. The first sense in the phrase's order that allows
    /// one wins.
    fn bridge(
        &self,
        g: &Graph,
        senses: &[Sense],
        st: Option<TypeId>,
        obj_types: &[TypeId],
    ) -> Option<(TypeId, bool)> {
        for s in senses {
            for (a, b) in self.ends(g, s.rel) {
                let (Some(a), Some(b)) = (a, b) else {
                    continue;
                };
                for &e in obj_types {
                    // A link the graph never holds is not reached round about either ("what
                    // treats atrial fibrillation" is not "diseases treated by drugs that cause
                    // it").
                    if self.lex.never_holds(&[*s], e)
                        || st.is_some_and(|t| self.lex.never_holds(&[*s], t))
                    {
                        continue;
                    }
                    // Object side: the subject fits one end, the object pairs with the other.
                    for (mine, other) in [(a, b), (b, a)] {
                        if st.is_none_or(|t| t == mine)
                            && e != other
                            && self.lex.pairs.contains_key(&(other, e))
                        {
                            return Some((other, false));
                        }
                    }
                    // Subject side: the object fits one end, the subject pairs with the other.
                    for (theirs, other) in [(a, b), (b, a)] {
                        if e == theirs {
                            if let Some(t) = st {
                                if t != other && self.lex.pairs.contains_key(&(t, other)) {
                                    return Some((other, true));
                                }
                            }
                        }
                    }
                }
            }
        }
        None
    }

    /// With no answer type and no verb: the first `pair` relation touching type `b`.
    fn default_from(&self, g: &Graph, b: TypeId) -> Vec<Sense> {
        let touches = |r: RelId| {
            self.ends(g, r)
                .iter()
                .any(|e| e.0 == Some(b) || e.1 == Some(b))
        };
        self.lex
            .pair_order
            .iter()
            .copied()
            .filter(|&r| touches(r))
            .map(|rel| Sense {
                rel,
                reversed: false,
            })
            .collect()
    }

    fn pair_rank(&self, r: RelId) -> usize {
        self.lex
            .pair_order
            .iter()
            .position(|&x| x == r)
            .unwrap_or(usize::MAX)
    }
}
