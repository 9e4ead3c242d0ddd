/** Environment variable → config path (dotted). An override wins over the file. */
export const ENV_OVERRIDES: Readonly<Record<string, string>> = {
  HYPERFLEET_API_URL: 'hyperfleetApi.baseUrl',
  HYPERFLEET_API_TOKEN_FILE: 'hyperfleetApi.tokenFile',
  BROKER_TYPE: 'broker.type',
  BROKER_URL: 'broker.url',
  BROKER_PROJECT_ID: 'broker.projectId',
  BROKER_TOPIC: 'broker.topic',
  BROKER_SUBSCRIPTION_ID: 'broker.subscriptionId',
  SECRET_STORE: 'store.type',
  KUBERNETES_TARGET: 'kubernetes.target',
  MANIFEST_DIR: 'kubernetes.manifestDir',
  KUBECONFIG_PATH: 'kubernetes.kubeconfig',
  EXECUTION_MODE: 'execution.mode',
  CONCURRENCY: 'execution.concurrency',
  HEALTH_PORT: 'server.healthPort',
  METRICS_PORT: 'server.metricsPort',
  LOG_LEVEL: 'logLevel',
};
