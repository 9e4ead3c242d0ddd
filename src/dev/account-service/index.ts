export {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
  type AccountServiceStandInOptions,
  type AccountFault,
  type AccountRoute,
  type StandInTransfer,
} from './server.js';
export { issueSelfSignedCertificate, type StandInCertificate } from './certificates.js';
