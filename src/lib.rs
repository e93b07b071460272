pub mod kubelet;
pub mod model;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod world;
