# Mix builds this OTP library (Erlang sources, no Elixir code, no Hex packages), so an Elixir
# application can depend on it with a git dependency:
#   {:cluster_topology, git: "https://…/cluster-topology.git", sparse: "clients/beam"}
defmodule ClusterTopology.MixProject do
  use Mix.Project

  def project do
    [
      app: :cluster_topology,
      version: "0.1.0",
      language: :erlang,
      erlc_paths: ["src"],
      erlc_options: [:debug_info],
      deps: [],
      package: [licenses: ["Apache-2.0"]]
    ]
  end

  def application do
    [extra_applications: [:kernel, :stdlib, :crypto, :public_key, :ssl]]
  end
end
