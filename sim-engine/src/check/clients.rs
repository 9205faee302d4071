//! A client history judged once, when the last client has finished.
//!
//! Every harness with clients wants the same invariant: record each operation as it goes,
//! and once every client is done, ask whether the whole history is linearizable. Asking
//! earlier would judge a history still growing (a pending operation looks timed out), and
//! asking again at every later step would repeat a search that cannot change its answer.

use std::fmt::Debug;
use std::hash::Hash;

use super::{CheckError, Model, OpLog, Pending};

/// The operations of a fixed number of clients, with their linearizability verdict decided
/// once, after the last client called [`ClientHistory::finished`].
///
/// Register [`ClientHistory::linearizable`] as an invariant: it passes while clients run
/// (there is nothing to judge yet) and then gives the one verdict, computed on first ask.
///
/// ```
/// use sim_core::check::{kv::{Kv, KvInput, KvOutput}, ClientHistory};
///
/// let mut history = ClientHistory::new(Kv, 2);
/// let put = history.call("c1", KvInput::Put { key: 1, value: 7 });
/// history.ret(put, KvOutput::Done);
/// history.finished();
/// assert!(history.linearizable().is_ok()); // c2 still runs: nothing to judge yet
///
/// let get = history.call("c2", KvInput::Get { key: 1 });
/// history.ret(get, KvOutput::Value(None)); // after the put returned: must have read 7
/// history.finished();
/// assert!(history.linearizable().is_err());
/// ```
#[derive(Debug)]
pub struct ClientHistory<M: Model> {
    model: M,
    log: OpLog<M::Input, M::Output>,
    clients_running: usize,
    verdict: Option<Result<(), CheckError>>,
}

/// A history of no clients: judged at once (nothing to judge is linearizable).
impl<M: Model + Default> Default for ClientHistory<M> {
    fn default() -> Self {
        ClientHistory::new(M::default(), 0)
    }
}

impl<M: Model> ClientHistory<M> {
    /// An empty history of `clients` clients, checked against `model`.
    pub fn new(model: M, clients: usize) -> Self {
        ClientHistory {
            model,
            log: OpLog::default(),
            clients_running: clients,
            verdict: None,
        }
    }

    /// One client has finished its workload.
    pub fn finished(&mut self) {
        assert!(
            self.clients_running > 0,
            "invariant: more clients finished than ClientHistory::new was told of"
        );
        self.clients_running -= 1;
    }

    /// Clients that have not finished yet.
    pub fn clients_running(&self) -> usize {
        self.clients_running
    }

    /// The operations so far.
    pub fn log(&self) -> &OpLog<M::Input, M::Output> {
        &self.log
    }

    /// `Ok` while any client runs; after the last one finished, whether the history is
    /// linearizable (searched on the first call, remembered after).
    pub fn linearizable(&mut self) -> Result<(), CheckError> {
        if self.clients_running > 0 {
            return Ok(());
        }
        let (model, log) = (&self.model, &self.log);
        self.verdict
            .get_or_insert_with(|| super::linearizable(model, log))
            .clone()
    }
}

/// Recording, as [`OpLog`] records: inputs and outputs are hashed into the run's history.
impl<M: Model> ClientHistory<M>
where
    M::Input: Debug + Hash,
    M::Output: Debug + Hash,
{
    /// `client` starts an operation ([`OpLog::call`]).
    pub fn call(&mut self, client: &str, input: M::Input) -> Pending {
        debug_assert!(
            self.verdict.is_none(),
            "invariant: no operation starts after the history was judged"
        );
        self.log.call(client, input)
    }

    /// The operation returned `output` ([`OpLog::ret`]).
    pub fn ret(&mut self, op: Pending, output: M::Output) {
        self.log.ret(op, output);
    }

    /// The client gave up on the operation ([`OpLog::time_out`]).
    pub fn time_out(&mut self, op: Pending) {
        self.log.time_out(op);
    }
}

#[cfg(test)]
mod tests {
    use super::ClientHistory;
    use crate::check::kv::{Kv, KvInput, KvOutput};

    #[test]
    fn the_verdict_waits_for_the_last_client_and_is_kept() {
        let mut history = ClientHistory::new(Kv, 1);
        let put = history.call("c1", KvInput::Put { key: 1, value: 7 });
        history.ret(put, KvOutput::Done);
        let get = history.call("c1", KvInput::Get { key: 1 });
        history.ret(get, KvOutput::Value(Some(8)));
        assert!(history.linearizable().is_ok(), "c1 still runs");
        history.finished();
        let verdict = history.linearizable();
        assert!(verdict.is_err(), "a read of a value never written");
        assert_eq!(
            history.linearizable(),
            verdict,
            "the same verdict, once decided"
        );
    }

    #[test]
    #[should_panic(expected = "more clients finished")]
    fn more_finished_clients_than_declared_is_a_harness_bug() {
        let mut history = ClientHistory::new(Kv, 1);
        history.finished();
        history.finished();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "after the history was judged")]
    fn an_operation_after_the_verdict_is_a_harness_bug() {
        let mut history = ClientHistory::new(Kv, 0);
        assert!(history.linearizable().is_ok());
        let _ = history.call("c1", KvInput::Get { key: 1 });
    }
}
