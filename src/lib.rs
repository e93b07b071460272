pub mod model;
pub mod scenario;
pub mod sim;
