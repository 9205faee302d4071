//! The clients: the workload and a call that retries across members.

use super::*;

/// The workload: a drawn number of calls, each from a free logical client. Each call draws
/// whether it joins the calls in flight (so they meet in the leader's group commit) or
/// waits for them to finish first — and then, after a short think time, draws a quiet period
/// in which no client says anything. Every call draws the same shape of choices, right
/// before it starts, so deleting one call's draws leaves the others intact.
pub(super) async fn clients(model: Rc<RefCell<Model>>, quiet: Quiet) {
    let socks: Vec<Rc<Socket<Rpc>>> = (0..CLIENTS)
        .map(|c| Rc::new(Socket::bind_exempt(RPC_PORT + c as u16).expect("client ports are free")))
        .collect();
    let mut seqs = [0u32; CLIENTS];
    let mut in_flight: Vec<(usize, sim_core::rt::JoinHandle<()>)> = Vec::new();
    for _ in 0..workload::op_count(MAX_OPS) {
        let join =
            in_flight.len() < CLIENTS && sim::draw(|s| s.chance("registry.join_in_flight", 1, 2));
        if !join {
            for (_, call) in in_flight.drain(..) {
                let _ = call.await;
            }
            workload::think(THINK_MS_MAX).await;
            quiet.after_op().await;
        }
        let c = (0..CLIENTS)
            .find(|c| in_flight.iter().all(|(busy, _)| busy != c))
            .expect("fewer calls in flight than clients");
        let name = sim::draw(|s| s.below("registry.name", NAMES)) as u8;
        let op = if sim::draw(|s| s.chance("registry.unregister", 1, 2)) {
            Op::Unregister { name }
        } else {
            Op::Register {
                name,
                owner: c as u8,
            }
        };
        let member = sim::draw(|s| s.below("registry.member", MEMBERS.len() as u64)) as usize;
        let id = sim::op_start(&(c, op));
        let first_seq = seqs[c];
        seqs[c] += CLIENT_ATTEMPTS;
        let (sock, m) = (socks[c].clone(), model.clone());
        {
            let mut m = model.borrow_mut();
            m.clients_waiting += 1;
            m.touch();
        }
        let handle =
            sim_core::rt::spawn(
                async move { call(id, c as u8, &sock, first_seq, op, member, m).await },
            );
        in_flight.push((c, handle));
    }
    for (_, call) in in_flight.drain(..) {
        let _ = call.await;
    }
    // The end of a run is at rest too: let the last batch's replication settle, so the
    // checks see it (far shorter than STALE_BOUND: this is not a quiet period).
    let settle = Duration::from_nanos(model.borrow().delivery_bound_ns) + HEARTBEAT;
    sleep(settle).await;
}

/// One client call: to `member`, then (if that member goes down or nothing comes back in
/// time) to the next ones, each attempt with its own sequence number.
pub(super) async fn call(
    id: sim::OpId,
    c: u8,
    sock: &Socket<Rpc>,
    first_seq: u32,
    op: Op,
    mut member: usize,
    model: Rc<RefCell<Model>>,
) {
    let mut answer = None;
    for attempt in 0..CLIENT_ATTEMPTS {
        let req = Req {
            client: c,
            seq: first_seq + attempt,
        };
        sock.send(
            Addr::named(MEMBERS[member], RPC_PORT),
            Rpc::Call { req, op },
        );
        let watch = net::watch(MEMBERS[member]).expect("members exist");
        let reply = async {
            loop {
                if let (
                    _,
                    Rpc::Reply {
                        req: r,
                        version,
                        index,
                        yes,
                    },
                ) = sock.recv().await
                {
                    if r == req {
                        return (version, index, yes);
                    }
                }
            }
        };
        let lost = watch.down();
        futures::pin_mut!(reply, lost);
        if let Ok(Either::Left((got, _))) = timeout(CLIENT_TIMEOUT, select(reply, lost)).await {
            answer = Some(got);
            break;
        }
        // The member went down, or nothing came back in time: try the next one.
        member = (member + 1) % MEMBERS.len();
    }
    {
        let mut m = model.borrow_mut();
        m.clients_waiting -= 1;
        m.touch();
        if let Some((version, index, yes)) = answer {
            m.acks.push(Ack {
                op,
                version,
                index,
                yes,
            });
        }
    }
    sim::op_result(id, &answer.map(|(_, _, yes)| yes));
}
