//! Request/response over datagrams: ids, matching, timeouts — what every RPC layer writes.
//!
//! An [`RpcClient`] numbers its requests and hands each reply to the call that sent it: a
//! task of its own receives on the client's socket and matches replies by id, so concurrent
//! calls from one client never take each other's replies, and a late or duplicated reply (the
//! network may do both) is dropped instead of answering the wrong call. [`RpcServer`] reads
//! requests and answers each with [`RpcServer::reply`]. Both sit on an ordinary [`Socket`] of
//! [`Envelope`]s, so every datagram fault applies.
//!
//! ```
//! use std::time::Duration;
//! use sim_core::net::rpc::{RpcClient, RpcError, RpcServer};
//! use sim_core::net::Addr;
//! use sim_core::sim::{Config, Sim};
//!
//! let mut sim = Sim::new(Config::default());
//! sim.node("adder", |_| async {
//!     let server = RpcServer::<(u32, u32), u32>::bind(1).unwrap();
//!     loop {
//!         let request = server.recv().await;
//!         let (a, b) = request.body;
//!         server.reply(&request, a + b);
//!     }
//! });
//! sim.client("c", |_| async {
//!     let client = RpcClient::<(u32, u32), u32>::bind(2).unwrap();
//!     let adder = Addr::named("adder", 1);
//!     let sum = client.call(adder, (2, 3), Duration::from_secs(1)).await;
//!     assert_eq!(sum, Ok(5));
//!     // Nobody listens on port 9: the call times out.
//!     let lost = client.call(Addr::named("adder", 9), (1, 1), Duration::from_millis(50)).await;
//!     assert_eq!(lost, Err(RpcError::Timeout));
//! });
//! assert!(sim.run_seed(0).outcome.class.is_pass());
//! ```

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::oneshot;

use super::{Addr, Message, NetError, Socket};
use crate::rt::{spawn, JoinHandle};

/// What travels: a request or a reply, with the id that pairs them.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Envelope<Req, Resp> {
    /// A call.
    Request {
        /// Chosen by the client, unique among its calls.
        id: u64,
        /// The request.
        body: Req,
    },
    /// The answer to the request with the same id.
    Reply {
        /// The request's id.
        id: u64,
        /// The answer.
        body: Resp,
    },
}

/// Why a call has no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RpcError {
    /// No reply within the call's timeout (the request or the reply was lost, delayed, or the
    /// server is down or slow: a caller cannot tell which).
    #[error("no reply within the timeout")]
    Timeout,
}

type Pending<Resp> = Rc<RefCell<BTreeMap<u64, oneshot::Sender<Resp>>>>;

/// The calling side; see the [module docs](self).
pub struct RpcClient<Req, Resp> {
    socket: Rc<Socket<Envelope<Req, Resp>>>,
    next_id: Cell<u64>,
    pending: Pending<Resp>,
    receiver: JoinHandle<()>,
}

impl<Req: Message, Resp: Message> RpcClient<Req, Resp> {
    /// A client on `port` of the current node, with its reply-matching task. Must be called
    /// from a task inside a simulation.
    pub fn bind(port: u16) -> Result<Self, NetError> {
        let socket = Rc::new(Socket::bind(port)?);
        let pending: Pending<Resp> = Rc::default();
        let receiver = spawn(match_replies(socket.clone(), pending.clone()));
        // Call ids are unique across the node's incarnations: a server that answers a request
        // of the previous incarnation after a restart sends the reply to the new one's socket
        // on the same port, where a reused id would hand it to an unrelated call (a vote reply
        // read as an append reply). The first incarnation's ids start at 0, as they always did.
        let first_id = u64::from(socket.inc) << 32;
        Ok(RpcClient {
            socket,
            next_id: Cell::new(first_id),
            pending,
            receiver,
        })
    }

    /// Sends `request` to `to` and waits at most `timeout` for its reply.
    pub async fn call(&self, to: Addr, request: Req, timeout: Duration) -> Result<Resp, RpcError> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let (tx, rx) = oneshot::channel();
        self.pending.borrow_mut().insert(id, tx);
        self.socket
            .send(to, Envelope::Request { id, body: request });
        let answer = crate::time::timeout(timeout, rx).await;
        // A timed-out call leaves no entry behind: its late reply is dropped on arrival.
        self.pending.borrow_mut().remove(&id);
        match answer {
            Ok(Ok(reply)) => Ok(reply),
            // The sender is only dropped with the entry, which this call removes itself.
            Ok(Err(oneshot::Canceled)) | Err(_) => Err(RpcError::Timeout),
        }
    }

    /// Calls in flight.
    pub fn in_flight(&self) -> usize {
        self.pending.borrow().len()
    }
}

impl<Req, Resp> Drop for RpcClient<Req, Resp> {
    fn drop(&mut self) {
        self.receiver.abort();
    }
}

/// Hands each reply to the call waiting for its id; replies nobody waits for are dropped.
async fn match_replies<Req: Message, Resp: Message>(
    socket: Rc<Socket<Envelope<Req, Resp>>>,
    pending: Pending<Resp>,
) {
    loop {
        let (_, envelope) = socket.recv().await;
        if let Envelope::Reply { id, body } = envelope {
            if let Some(waiting) = pending.borrow_mut().remove(&id) {
                let _ = waiting.send(body);
            }
        }
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Request<Req> {
    /// Who sent it (where the reply goes).
    pub from: Addr,
    /// Its id.
    pub id: u64,
    /// The request.
    pub body: Req,
}

/// The answering side; see the [module docs](self).
pub struct RpcServer<Req, Resp> {
    socket: Socket<Envelope<Req, Resp>>,
}

impl<Req: Message, Resp: Message> RpcServer<Req, Resp> {
    /// A server on `port` of the current node.
    pub fn bind(port: u16) -> Result<Self, NetError> {
        Ok(RpcServer {
            socket: Socket::bind(port)?,
        })
    }

    /// The next request (stray replies sent to this port are skipped).
    pub async fn recv(&self) -> Request<Req> {
        loop {
            let (from, envelope) = self.socket.recv().await;
            if let Envelope::Request { id, body } = envelope {
                return Request { from, id, body };
            }
        }
    }

    /// Answers `request`.
    pub fn reply(&self, request: &Request<Req>, body: Resp) {
        self.socket.send(
            request.from,
            Envelope::Reply {
                id: request.id,
                body,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{RpcClient, RpcError, RpcServer};
    use crate::net::Addr;
    use crate::node::{crash, restart};
    use crate::sim::{Config, Sim};
    use crate::time::sleep;

    /// A server answers a request of the caller's previous incarnation after the caller
    /// restarted: the reply reaches the new incarnation's socket on the same port, and must
    /// not answer the new incarnation's first call.
    #[test]
    fn a_late_reply_to_a_previous_incarnation_answers_no_new_call() {
        let mut sim = Sim::new(Config::default());
        sim.node("server", |_| async {
            let server = RpcServer::<&'static str, &'static str>::bind(1).unwrap();
            loop {
                let request = server.recv().await;
                // Slow on the first request only: its reply goes out after the restart.
                if request.body == "vote" {
                    sleep(Duration::from_millis(100)).await;
                    server.reply(&request, "vote reply");
                } else {
                    server.reply(&request, "append reply");
                }
            }
        });
        sim.node("caller", |ctx| async move {
            let client = RpcClient::<&'static str, &'static str>::bind(2).unwrap();
            let server = Addr::named("server", 1);
            if ctx.incarnation() == 0 {
                // Never answered within this incarnation: the node crashes first.
                let _ = client.call(server, "vote", Duration::from_secs(10)).await;
            } else {
                sleep(Duration::from_millis(80)).await;
                // Sent just before the late vote reply arrives; the server answers it after
                // that reply.
                let answer = client
                    .call(server, "append", Duration::from_millis(50))
                    .await;
                assert_ne!(
                    answer,
                    Ok("vote reply"),
                    "a reply of the previous incarnation"
                );
                assert!(matches!(
                    answer,
                    Ok("append reply") | Err(RpcError::Timeout)
                ));
            }
            std::future::pending::<()>().await;
        });
        sim.client("nemesis", |_| async {
            // After the vote request has arrived (traffic of a crashed incarnation that is
            // still in flight is cancelled), before its reply.
            sleep(Duration::from_millis(20)).await;
            crash("caller").unwrap();
            restart("caller").unwrap();
            sleep(Duration::from_millis(300)).await;
        });
        let report = sim.run_seed(0);
        assert!(
            report.outcome.class.is_pass(),
            "{}",
            report.outcome.summary_line()
        );
    }
}
