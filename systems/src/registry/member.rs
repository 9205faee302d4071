//! A member: leader election by rank, group commit through the store, replication to the
//! followers, and forwarding of client calls.

use super::model::now_ns;
use super::*;

pub(super) struct Queued {
    req: Req,
    op: Op,
    origin: usize,
}

pub(super) struct State {
    /// The leader this member follows (or is), with its epoch.
    leader: Option<(u64, usize)>,
    /// Client calls held here: who to answer, and the operation.
    held: BTreeMap<Req, (Addr, Op)>,
}

pub(super) struct Member {
    me: usize,
    incarnation: u32,
    ids: [NodeId; 3],
    model: Rc<RefCell<Model>>,
    bugs: Bugs,
    hooks: Hooks,
    rpc: Socket<Rpc>,
    repl: Socket<Repl>,
    control: Socket<Repl>,
    /// Batches received on either socket (for the test-only corruption hooks).
    batches_seen: Cell<u64>,
    state: RefCell<State>,
    queue: mpsc::UnboundedSender<Queued>,
    changed: mpsc::UnboundedSender<()>,
}

pub(super) async fn store_latency() {
    let ms = sim::draw(|s| s.range_inclusive("registry.store_ms", 1, STORE_MS_MAX));
    sleep(Duration::from_millis(ms)).await;
}

pub(super) async fn member(
    me: usize,
    ctx: NodeCtx,
    model: Rc<RefCell<Model>>,
    bugs: Bugs,
    hooks: Hooks,
) {
    let rpc = Socket::<Rpc>::bind_exempt(RPC_PORT).expect("rpc port is free");
    let repl = Socket::<Repl>::bind(REPL_PORT).expect("replication port is free");
    let control = Socket::<Repl>::bind_exempt(CONTROL_PORT).expect("control port is free");
    {
        // A (re)start begins with an empty replica that must sync from the leader.
        // (At the very first start every replica is the empty table at version 0, as the
        // store is.)
        let mut m = model.borrow_mut();
        m.replicas[me] = Replica {
            synced: ctx.incarnation() == 0,
            ..Replica::default()
        };
        m.busy[me] = Busy::default();
        m.touch();
    }
    let ids = MEMBERS.map(|n| node::lookup(n).expect("members exist"));
    let (queue, queued) = mpsc::unbounded();
    let (changed, mut changes) = mpsc::unbounded();
    let this = Rc::new(Member {
        me,
        incarnation: ctx.incarnation(),
        ids,
        model,
        bugs,
        hooks,
        rpc,
        repl,
        control,
        batches_seen: Cell::new(0),
        state: RefCell::new(State {
            leader: None,
            held: BTreeMap::new(),
        }),
        queue,
        changed,
    });
    // Say hello to the store and learn the lease.
    store_latency().await;
    let (epoch, holder) = {
        let mut m = this.model.borrow_mut();
        m.store.incarnations[me] = this.incarnation;
        (m.store.epoch, m.store.leader)
    };
    let t = this.clone();
    sim_core::rt::spawn(async move { t.serve_rpc().await });
    let t = this.clone();
    sim_core::rt::spawn(async move { t.serve_repl(&t.repl).await });
    let t = this.clone();
    sim_core::rt::spawn(async move { t.serve_repl(&t.control).await });
    let t = this.clone();
    sim_core::rt::spawn(async move { t.commit_loop(queued).await });
    if holder == (me, this.incarnation) {
        this.become_leader(epoch).await;
    } else if holder.0 == me {
        // An earlier incarnation of this member held the lease: its session is over.
        this.elect(epoch).await;
    } else {
        this.adopt(epoch, holder.0);
    }
    // Watch the leader; when it is lost, elect.
    loop {
        let leader = this.state.borrow().leader;
        match leader {
            Some((_, l)) if l == me => std::future::pending::<()>().await,
            Some((epoch, l)) => {
                let watch = net::watch(MEMBERS[l]).expect("members exist");
                let lost = watch.down();
                futures::pin_mut!(lost);
                if let Either::Left(_) = select(lost, changes.next()).await {
                    this.elect(epoch).await;
                }
            }
            None => unreachable!("a member always knows a leader after its start"),
        }
    }
}

impl Member {
    fn leader(&self) -> Option<(u64, usize)> {
        self.state.borrow().leader
    }

    fn is_leader(&self) -> bool {
        self.leader().is_some_and(|(_, l)| l == self.me)
    }

    fn rpc_addr(&self, i: usize) -> Addr {
        Addr {
            node: self.ids[i],
            port: RPC_PORT,
        }
    }

    fn repl_addr(&self, i: usize) -> Addr {
        Addr {
            node: self.ids[i],
            port: REPL_PORT,
        }
    }

    fn control_addr(&self, i: usize) -> Addr {
        Addr {
            node: self.ids[i],
            port: CONTROL_PORT,
        }
    }

    fn member_of(&self, addr: Addr) -> Option<usize> {
        self.ids.iter().position(|&id| id == addr.node)
    }

    /// Follows `leader` of `epoch` if that is newer than what this member knows; re-forwards
    /// the calls it holds.
    fn adopt(&self, epoch: u64, leader: usize) {
        {
            let mut st = self.state.borrow_mut();
            if st.leader.is_some_and(|(e, _)| e >= epoch) {
                return;
            }
            st.leader = Some((epoch, leader));
        }
        let _ = self.changed.unbounded_send(());
        if leader == self.me {
            return;
        }
        let held: Vec<(Req, Op)> = self
            .state
            .borrow()
            .held
            .iter()
            .map(|(req, (_, op))| (*req, *op))
            .collect();
        for (req, op) in held {
            self.rpc.send(
                self.rpc_addr(leader),
                Rpc::Forward {
                    req,
                    op,
                    origin: self.me as u8,
                },
            );
        }
    }

    async fn elect(self: &Rc<Self>, seen_epoch: u64) {
        self.set_electing(true);
        sleep(ELECTION_STAGGER * self.me as u32).await;
        store_latency().await;
        let claimed = {
            let mut m = self.model.borrow_mut();
            m.store.claim(self.me, self.incarnation, seen_epoch)
        };
        match claimed {
            Ok(epoch) => self.become_leader(epoch).await,
            Err((epoch, holder)) if epoch > seen_epoch || self.leader().is_none() => {
                self.adopt(epoch, holder)
            }
            // The holder is alive (a partition fired the watch): watch it again, later.
            Err(_) => sleep(ELECTION_RETRY).await,
        }
        self.set_electing(false);
    }

    fn set_electing(&self, on: bool) {
        let mut m = self.model.borrow_mut();
        m.busy[self.me].electing = on;
        m.touch();
    }

    async fn become_leader(self: &Rc<Self>, epoch: u64) {
        store_latency().await;
        {
            let mut m = self.model.borrow_mut();
            let (version, table) = (m.store.version, m.store.table.clone());
            m.replicas[self.me] = Replica {
                version,
                table,
                synced: true,
                resyncing: false,
            };
            m.touch();
        }
        self.adopt(epoch, self.me);
        if !self.bugs.no_heartbeat {
            let t = self.clone();
            sim_core::rt::spawn(async move { t.heartbeat_loop().await });
        }
        let held: Vec<(Req, Op)> = self
            .state
            .borrow()
            .held
            .iter()
            .map(|(req, (_, op))| (*req, *op))
            .collect();
        for (req, op) in held {
            self.enqueue(req, op, self.me);
        }
    }

    fn enqueue(&self, req: Req, op: Op, origin: usize) {
        let mut m = self.model.borrow_mut();
        m.busy[self.me].queued += 1;
        m.touch();
        let _ = self.queue.unbounded_send(Queued { req, op, origin });
    }

    async fn heartbeat_loop(&self) {
        loop {
            sleep(HEARTBEAT).await;
            let (epoch, version) = {
                let m = self.model.borrow();
                (
                    self.leader().expect("a leader knows its epoch").0,
                    m.replicas[self.me].version,
                )
            };
            for i in (0..MEMBERS.len()).filter(|&i| i != self.me) {
                self.control
                    .send(self.control_addr(i), Repl::Heartbeat { epoch, version });
            }
        }
    }

    async fn serve_rpc(&self) {
        loop {
            let (from, msg) = self.rpc.recv().await;
            match msg {
                Rpc::Call { req, op } => {
                    {
                        let mut st = self.state.borrow_mut();
                        if st.held.insert(req, (from, op)).is_none() {
                            let mut m = self.model.borrow_mut();
                            m.busy[self.me].held_calls += 1;
                            m.touch();
                        }
                    }
                    match self.leader() {
                        Some((_, l)) if l == self.me => self.enqueue(req, op, self.me),
                        Some((_, l)) => self.rpc.send(
                            self.rpc_addr(l),
                            Rpc::Forward {
                                req,
                                op,
                                origin: self.me as u8,
                            },
                        ),
                        None => {}
                    }
                }
                Rpc::Forward { req, op, origin } => match self.leader() {
                    Some((_, l)) if l == self.me => self.enqueue(req, op, origin as usize),
                    // Not the leader (any more): pass it on to the one this member follows.
                    Some((_, l)) => {
                        self.rpc
                            .send(self.rpc_addr(l), Rpc::Forward { req, op, origin });
                    }
                    None => {}
                },
                Rpc::Reply {
                    req,
                    version,
                    index,
                    yes,
                } => self.answer(req, version, index, yes, true),
            }
        }
    }

    /// Answers a held call (if still held) with its committed result.
    fn answer(&self, req: Req, version: u64, index: u32, yes: bool, forwarded: bool) {
        let Some((client, op)) = self.state.borrow_mut().held.remove(&req) else {
            return;
        };
        {
            let mut m = self.model.borrow_mut();
            m.busy[self.me].held_calls -= 1;
            m.touch();
            if let (true, true, Op::Register { name, owner }) =
                (self.bugs.reply_reinsert, forwarded && yes, op)
            {
                // Planted bug: "my client's register succeeded; make sure my replica shows
                // it" — once the batch is applied, a later op of the batch may have removed it.
                let r = &mut m.replicas[self.me];
                if r.version >= version {
                    r.table.insert(name, owner);
                }
            }
        }
        self.rpc.send(
            client,
            Rpc::Reply {
                req,
                version,
                index,
                yes,
            },
        );
    }

    async fn commit_loop(&self, mut queued: mpsc::UnboundedReceiver<Queued>) {
        while let Some(first) = queued.next().await {
            // Group commit: everything queued by now goes into this batch.
            let mut batch = vec![first];
            while let Ok(q) = queued.try_recv() {
                batch.push(q);
            }
            {
                let mut m = self.model.borrow_mut();
                m.busy[self.me].queued -= batch.len();
                m.busy[self.me].committing = true;
                m.touch();
            }
            store_latency().await;
            let epoch = self.leader().expect("a leader knows its epoch").0;
            let ops: Vec<Op> = batch.iter().map(|q| q.op).collect();
            let committed = self.model.borrow_mut().store.commit(epoch, &ops);
            let Some((version, answers)) = committed else {
                // Fenced: a newer leader holds the lease. Never answer what was not
                // committed; the origins re-forward to the new leader.
                let mut m = self.model.borrow_mut();
                m.busy[self.me].committing = false;
                m.touch();
                continue;
            };
            {
                let mut m = self.model.borrow_mut();
                let r = &mut m.replicas[self.me];
                debug_assert_eq!(r.version + 1, version, "leader replica behind the store");
                for op in &ops {
                    apply(&mut r.table, op);
                }
                r.version = version;
            }
            let followers: Vec<usize> = (0..MEMBERS.len()).filter(|&i| i != self.me).collect();
            for &i in &followers {
                if self.bugs.partial_batch {
                    // Planted bug: one message per operation, all sharing the version.
                    for op in &ops {
                        self.repl.send(
                            self.repl_addr(i),
                            Repl::Batch {
                                epoch,
                                version,
                                ops: vec![*op],
                            },
                        );
                    }
                } else {
                    self.repl.send(
                        self.repl_addr(i),
                        Repl::Batch {
                            epoch,
                            version,
                            ops: ops.clone(),
                        },
                    );
                }
            }
            self.replication_sent();
            for (index, (q, yes)) in batch.iter().zip(answers).enumerate() {
                if q.origin == self.me {
                    self.answer(q.req, version, index as u32, yes, false);
                } else {
                    self.rpc.send(
                        self.rpc_addr(q.origin),
                        Rpc::Reply {
                            req: q.req,
                            version,
                            index: index as u32,
                            yes,
                        },
                    );
                }
            }
            let mut m = self.model.borrow_mut();
            m.busy[self.me].committing = false;
            m.touch();
        }
    }

    /// Replication of an operation is in flight until the network's delivery bound passes.
    fn replication_sent(&self) {
        let mut m = self.model.borrow_mut();
        let settles = now_ns() + m.delivery_bound_ns;
        m.repl_settles_at_ns = m.repl_settles_at_ns.max(settles);
    }

    fn request_resync(&self) {
        let Some((_, l)) = self.leader() else {
            return;
        };
        if l == self.me {
            return;
        }
        self.model.borrow_mut().replicas[self.me].resyncing = true;
        self.control.send(
            self.control_addr(l),
            Repl::ResyncReq {
                from: self.me as u8,
            },
        );
    }

    /// Serves one replication socket: the batch stream or the control channel.
    async fn serve_repl(&self, socket: &Socket<Repl>) {
        loop {
            let (from, msg) = socket.recv().await;
            let sender = self.member_of(from);
            if self.hooks.corruption == Some(Corruption::M3IgnoresReplication)
                && self.me == 2
                && self.batches_seen.get() > 0
            {
                continue;
            }
            match msg {
                Repl::Batch {
                    epoch,
                    version,
                    ops,
                } => {
                    self.batches_seen.set(self.batches_seen.get() + 1);
                    if let Some(s) = sender {
                        self.adopt(epoch, s);
                    }
                    if self.is_leader() {
                        continue;
                    }
                    let (synced, applied) = {
                        let m = self.model.borrow();
                        (m.replicas[self.me].synced, m.replicas[self.me].version)
                    };
                    let skip_first =
                        self.hooks.corruption == Some(Corruption::FollowersSkipFirstOp);
                    if synced
                        && (version == applied + 1
                            || (self.bugs.partial_batch && version == applied))
                    {
                        // (With the planted bug, a message at the applied version is taken
                        // for "another message of the batch being applied".)
                        let mut m = self.model.borrow_mut();
                        let r = &mut m.replicas[self.me];
                        for op in ops.iter().skip(usize::from(skip_first)) {
                            apply(&mut r.table, op);
                        }
                        r.version = version;
                    } else if !synced || version > applied + 1 {
                        self.request_resync();
                    }
                }
                Repl::Heartbeat { epoch, version } => {
                    if let Some(s) = sender {
                        self.adopt(epoch, s);
                    }
                    let m = self.model.borrow();
                    let r = &m.replicas[self.me];
                    let behind = !r.synced || version > r.version;
                    drop(m);
                    if behind && !self.is_leader() {
                        self.request_resync();
                    }
                }
                Repl::ResyncReq { from: asker } => {
                    if !self.is_leader() {
                        continue;
                    }
                    let epoch = self.leader().expect("leader").0;
                    let (version, table) = {
                        let m = self.model.borrow();
                        (
                            m.replicas[self.me].version,
                            m.replicas[self.me].table.clone(),
                        )
                    };
                    self.control.send(
                        self.control_addr(asker as usize),
                        Repl::Snapshot {
                            epoch,
                            version,
                            table,
                        },
                    );
                    self.replication_sent();
                }
                Repl::Snapshot {
                    epoch,
                    version,
                    table,
                } => {
                    if let Some(s) = sender {
                        self.adopt(epoch, s);
                    }
                    if self.is_leader() {
                        continue;
                    }
                    let mut m = self.model.borrow_mut();
                    let r = &mut m.replicas[self.me];
                    if !r.synced || version >= r.version {
                        *r = Replica {
                            version,
                            table,
                            synced: true,
                            resyncing: false,
                        };
                    }
                }
            }
        }
    }
}
