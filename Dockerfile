# podsim's container image: the image deploy/sweep-indexed-job.yaml and
# deploy/sweep-merge-job.yaml name.
#
#   docker build -t podsim:0.1.0 .
#   docker run --rm podsim:0.1.0 podsim run scenarios/quickstart.yaml
#
# Stage 1 builds the release binary with the repository's Cargo.lock; stage 2 is a
# slim Debian with only the binary (on PATH) and the bundled scenarios under /podsim.
# The plot font is compiled into the binary, so the runtime image needs no font package.

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Cargo finds the two benches by their default paths when it reads the manifest, so
# benches/ must be present although only the binary is built (the test binary's path
# is explicit and is not looked for).
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY assets ./assets
COPY benches ./benches
RUN cargo build --release --locked --bin podsim \
    && strip target/release/podsim

FROM debian:bookworm-slim
RUN useradd --create-home --uid 10001 podsim
COPY --from=build /src/target/release/podsim /usr/local/bin/podsim
COPY scenarios /podsim/scenarios
WORKDIR /podsim
USER 10001
CMD ["podsim", "--help"]
