export {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
  type AccountServiceStandInOptions,
  type AccountFault,
  type AccountRoute,
  type StandInTransfer,
  type StandInCertificate,
  issueSelfSignedCertificate,
} from './server.js';
